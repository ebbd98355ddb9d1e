export interface SitemapLimits {
  /** Files fetched, failures included. */
  files: number;
  /** Entries kept. */
  entries: number;
  /** Bytes read over every file, after gunzip. */
  bytes: number;
}

/** The crawl's caps (SPEC "Crawl and map"): 50 files, 50,000 entries, 50 MiB. */
export const SITEMAP_LIMITS: SitemapLimits = { files: 50, entries: 50_000, bytes: 50 * 1024 * 1024 };
/** The sitemap protocol's longest URL; a longer `<loc>` or line is skipped. */
export const MAX_SITEMAP_URL = 2048;
