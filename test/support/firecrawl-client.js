// Drives sift's Firecrawl API (v2, the API URL given: …/firecrawl) with Firecrawl's official
// JavaScript SDK, unchanged (run under Node 24 by test/e2e/firecrawl.spec.ts). Prints one JSON
// object: each call's return value, or its error.
const { Firecrawl } = require('@mendable/firecrawl-js');

const [base, token, site] = process.argv.slice(2);
const fc = new Firecrawl({ apiKey: token, apiUrl: base });

/** The call's value, or its error's message, status and code. */
async function settle(p) {
  try {
    return { ok: await p };
  } catch (e) {
    return { error: { message: e.message, status: e.status, code: e.code } };
  }
}

(async () => {
  const out = {};
  out.scrape = await settle(fc.scrape(`${site}/a`, { formats: ['markdown', 'html', 'links'], maxAge: 0 }));
  out.batch = await settle(
    fc.batchScrape([`${site}/a`, `${site}/b`], {
      options: { formats: ['markdown'] },
      pollInterval: 1,
      timeout: 30,
    }),
  );
  out.crawl = await settle(
    fc.crawl(`${site}/`, {
      limit: 3,
      sitemap: 'skip',
      scrapeOptions: { formats: ['markdown'] },
      pollInterval: 1,
      timeout: 30,
    }),
  );
  out.map = await settle(fc.map(`${site}/`, { sitemap: 'skip' }));
  const missing = await settle(
    fc.batchScrape([`${site}/a`, 'http://127.0.0.1:1/refused'], { pollInterval: 1, timeout: 30 }),
  );
  out.batchErrors = missing.ok ? await settle(fc.getBatchScrapeErrors(missing.ok.id)) : missing;
  out.crawlErrors = out.crawl.ok ? await settle(fc.getCrawlErrors(out.crawl.ok.id)) : out.crawl;
  out.crawlStatus = out.crawl.ok ? await settle(fc.getCrawlStatus(out.crawl.ok.id, { limit: 1 })) : out.crawl;
  const docs = { limit: 10, sitemap: 'skip', pollInterval: 1, timeout: 30 };
  out.subPath = await settle(fc.crawl(`${site}/docs/guide/`, docs));
  out.entireDomain = await settle(fc.crawl(`${site}/docs/guide/`, { ...docs, crawlEntireDomain: true }));
  const started = await settle(fc.startCrawl(`${site}/slow/0`, { limit: 20, sitemap: 'skip' }));
  out.startCrawl = started;
  out.active = await settle(fc.getActiveCrawls());
  if (started.ok) out.cancel = await settle(fc.cancelCrawl(started.ok.id));
  out.activeAfter = await settle(fc.getActiveCrawls());
  const batchStarted = await settle(
    fc.startBatchScrape([`${site}/slow/1`, `${site}/slow/2`, `${site}/slow/3`]),
  );
  out.startBatch = batchStarted;
  if (batchStarted.ok) {
    out.cancelBatch = await settle(fc.cancelBatchScrape(batchStarted.ok.id));
    out.batchAfterCancel = await settle(fc.getBatchScrapeStatus(batchStarted.ok.id));
  }
  out.links = await settle(fc.scrape(`${site}/linked`, { formats: ['links'] }));
  out.concurrency = await settle(fc.getConcurrency());
  out.creditUsage = await settle(fc.getCreditUsage());
  out.tokenUsage = await settle(fc.getTokenUsage());
  out.queueStatus = await settle(fc.getQueueStatus());
  out.creditHistory = await settle(fc.getCreditUsageHistorical());
  out.tokenHistory = await settle(fc.getTokenUsageHistorical(true));
  out.search = await settle(fc.search('sift', { limit: 3 }));
  out.extract = await settle(fc.startExtract({ urls: [`${site}/a`], prompt: 'the title' }));
  out.agent = await settle(fc.startAgent({ prompt: 'find the title' }));
  out.paramsPreview = await settle(fc.crawlParamsPreview(`${site}/`, 'only the docs'));
  out.json = await settle(fc.scrape(`${site}/a`, { formats: [{ type: 'json', prompt: 'the title' }] }));
  const tracking = { formats: ['markdown', { type: 'changeTracking', modes: ['git-diff'] }], maxAge: 0 };
  out.tracked = [];
  for (let i = 0; i < 2; i++) out.tracked.push(await settle(fc.scrape(`${site}/visits`, tracking)));
  out.trackedPlain = await settle(fc.scrape(`${site}/visits`, { formats: ['markdown', 'changeTracking'], maxAge: 0 }));
  out.trackedJson = await settle(
    fc.scrape(`${site}/visits`, { formats: [{ type: 'changeTracking', modes: ['json'], prompt: 'x' }] }),
  );
  out.rawHtml = await settle(fc.scrape(`${site}/a`, { formats: ['rawHtml', 'markdown'] }));
  out.mainContent = await settle(fc.scrape(`${site}/linked`, { formats: ['markdown'] }));
  out.wholePage = await settle(
    fc.scrape(`${site}/linked`, { formats: ['markdown'], onlyMainContent: false }),
  );
  out.regex = await settle(
    fc.crawl(`${site}/docs/`, { ...docs, includePaths: ['^/docs/guide/', 'faq'], excludePaths: ['two'] }),
  );
  out.lookahead = await settle(fc.startCrawl(`${site}/`, { includePaths: ['^/docs/(?!api)'] }));
  process.stdout.write(JSON.stringify(out));
})();
