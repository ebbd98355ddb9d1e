// Drives sift's Firecrawl v1 API (the API URL given: …/firecrawl) with Firecrawl's JavaScript SDK
// of the 1.x line and LangChain's FireCrawlLoader built on it, both unchanged (pinned in
// package.json beside this file; run by test/e2e/firecrawl-clients.spec.ts). Prints one JSON
// object: each call's return value, or its error.
const FirecrawlApp = require('@mendable/firecrawl-js').default;
const { FireCrawlLoader } = require('@langchain/community/document_loaders/web/firecrawl');

const [base, token, site] = process.argv.slice(2);
const app = new FirecrawlApp({ apiKey: token, apiUrl: base });

/** The call's value, or its error's message and status. */
async function settle(p) {
  try {
    return { ok: await p };
  } catch (e) {
    return { error: { message: e.message, status: e.statusCode ?? e.status } };
  }
}

/** The documents a FireCrawlLoader loads, as plain objects. */
async function load(mode, url, params) {
  const docs = await new FireCrawlLoader({ url, apiKey: token, apiUrl: base, mode, params }).load();
  return docs.map((d) => ({ pageContent: d.pageContent, metadata: d.metadata }));
}

(async () => {
  const out = {};
  out.scrape = await settle(app.scrapeUrl(`${site}/a`, { formats: ['markdown', 'links', 'rawHtml'] }));
  out.crawl = await settle(
    app.crawlUrl(`${site}/`, { limit: 3, ignoreSitemap: true, scrapeOptions: { formats: ['markdown'] } }, 1),
  );
  out.subPath = await settle(app.crawlUrl(`${site}/docs/guide/`, { limit: 10, ignoreSitemap: true }, 1));
  out.backward = await settle(
    app.crawlUrl(`${site}/docs/guide/`, { limit: 10, ignoreSitemap: true, allowBackwardLinks: true }, 1),
  );
  out.map = await settle(app.mapUrl(`${site}/`, { ignoreSitemap: true }));
  out.batch = await settle(app.batchScrapeUrls([`${site}/a`, `${site}/b`], { formats: ['markdown'] }, 1));
  out.maxDepth = await settle(app.asyncCrawlUrl(`${site}/`, { maxDepth: 2 }));
  out.search = await settle(app.search('sift'));
  out.loaderScrape = await settle(load('scrape', `${site}/a`));
  out.loaderCrawl = await settle(load('crawl', `${site}/`, { limit: 3, ignoreSitemap: true }));
  out.loaderMap = await settle(load('map', `${site}/`, { ignoreSitemap: true }));
  out.llmstxt = await settle(app.generateLLMsText(`${site}/`, { maxUrls: 3, showFullText: true }));
  out.llmstxtShort = await settle(app.generateLLMsText(`${site}/docs/`, { maxUrls: 2 }));
  process.stdout.write(JSON.stringify(out));
})();
