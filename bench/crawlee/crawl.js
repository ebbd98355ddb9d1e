/**
 * A site read as a Node user would read it without sift: crawlee's CheerioCrawler (pinned in this
 * folder's package.json), each page's article by Mozilla's Readability over linkedom (the DOM sift
 * uses) and written as markdown by sift's own writer, kept in crawlee's in-memory storage. Robots
 * are read, as sift reads them; the concurrency is bench/crawl's, from the start.
 *
 *   node bench/crawlee/crawl.js START_URL PAGES CONCURRENCY
 *
 * Prints one line of JSON: pages handled and failed, the crawl's seconds and CPU milliseconds (all
 * threads), and the process's peak RSS in MB.
 */
const path = require('node:path');
const { CheerioCrawler, Configuration, log } = require('@crawlee/cheerio');
const { Readability } = require('@mozilla/readability');
const { parseHTML } = require('linkedom');
const { writeArticle } = require(path.join(__dirname, '../../dist-bench/src/extract/extract'));

async function main() {
  const [start, pages, concurrency] = process.argv.slice(2);
  log.setLevel(log.LEVELS.ERROR);
  let written = 0;
  const crawler = new CheerioCrawler(
    {
      minConcurrency: Number(concurrency),
      maxConcurrency: Number(concurrency),
      maxRequestsPerCrawl: Number(pages),
      respectRobotsTxtFile: true,
      async requestHandler({ request, body, enqueueLinks, pushData }) {
        const { document } = parseHTML(String(body));
        const article = new Readability(document).parse();
        const markdown = article ? (writeArticle(article.content, ['markdown']).markdown ?? '') : '';
        if (markdown.length > 0) written++;
        await pushData({ url: request.loadedUrl, title: article?.title ?? '', markdown });
        await enqueueLinks();
      },
    },
    new Configuration({ persistStorage: false, purgeOnStart: true }),
  );
  const t = performance.now();
  const cpu = process.cpuUsage();
  const stats = await crawler.run([start]);
  const used = process.cpuUsage(cpu);
  process.stdout.write(
    JSON.stringify({
      pages: stats.requestsFinished,
      failed: stats.requestsFailed,
      written,
      seconds: (performance.now() - t) / 1000,
      cpuMs: (used.user + used.system) / 1000,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    }) + '\n',
  );
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + '\n');
  process.exit(1);
});
