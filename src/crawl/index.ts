/**
 * A crawl, whole: what the rest of sift uses of it comes through here.
 *
 *   request.ts      what a crawl request may ask, checked (crawlSpecFrom) → spec.ts, the spec
 *                   kept with its job
 *   scope.ts, glob.ts, path-regex.ts, canonical.ts
 *                   which URLs are in it (host, paths, robots.txt through site-links.ts) and the
 *                   one canonical form each is met by
 *   sitemaps.ts, sitemap-*.ts   the sitemaps a seed adds, streamed and bounded
 *   findings.ts     what a fetched page adds to its job (findingsOf), before it is written
 *   growth.ts       the writing of it: the page's duplicate, the links that become targets
 *                   (growCrawl), inside the transition that records the page
 *                   (batch/transitions/grow-crawl.ts); stored by dcache/crawl.repository.ts
 *   map.service.ts  a site's map (POST /v1/map), from the same parts
 */
export { canonicalUrl } from './canonical';
export { CrawlModule } from './crawl.module';
export { findingsOf, type CrawlTarget, type FetchedPage, type PageFindings } from './findings';
export { duplicateOf, growCrawl } from './growth';
export { MAX_MAP_LIMIT, MapService } from './map.service';
export { crawlSpecFrom, type CrawlAsk } from './request';
export { MAX_GLOB_CHARS } from './scope';
export { MAX_REGEX_CHARS } from './path-regex';
export { SiteLinks, linkRulesOf, type LinkRules } from './site-links';
export {
  LLMS_TXT_MODES,
  MAX_DEPTH,
  MAX_GLOBS,
  SITEMAP_MODES,
  crawlSpecOf,
  type CrawlSpec,
  type LlmsTxtMode,
  type SitemapMode,
} from './spec';
