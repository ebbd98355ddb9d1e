/** What a crawl was asked, kept with its job (batch_job.crawl, JSON). */
export interface CrawlSpec {
  seed: string;
  /** Targets the crawl may hold in all, the seed included. */
  limit: number;
  /** Link hops from the seed a page may be (the seed is 0; a sitemap's entry is 1). */
  max_depth: number;
  /** Only URLs whose path starts with this are followed (absent: every path of the site). */
  path_prefix?: string;
  include_paths: string[];
  exclude_paths: string[];
  /** Regular expressions searched for in the path (absent in jobs stored before they existed). */
  include_regex?: string[];
  exclude_regex?: string[];
  allow_subdomains: boolean;
  allow_external: boolean;
  ignore_query: boolean;
  sitemap: SitemapMode;
  /** The site's /llms.txt: its links followed beside the rest, not read, or all that is followed (absent in jobs stored before it: skip, the default). */
  llms_txt?: LlmsTxtMode;
  /** A job (kind llmstxt) whose pages make the site's llms.txt and llms-full.txt. */
  llms_files?: boolean;
  /** Asked through Firecrawl with showFullText: its status answers carry llms-full.txt too. */
  llms_full?: boolean;
  /** The fetch options of every page (those of /v1/fetch). */
  options?: object;
}

export const SITEMAP_MODES = ['include', 'skip', 'only'] as const;
export type SitemapMode = (typeof SITEMAP_MODES)[number];
export const LLMS_TXT_MODES = SITEMAP_MODES;
export type LlmsTxtMode = SitemapMode;

export const DEFAULT_CRAWL_LIMIT = 100;
export const DEFAULT_MAX_DEPTH = 3;
export const MAX_DEPTH = 20;
/** Globs in include_paths or exclude_paths, each; patterns in include_regex or exclude_regex, each. */
export const MAX_GLOBS = 20;

/** The spec a job stores, or undefined for a batch (or a value no build of sift wrote). */
export function crawlSpecOf(json: string | null | undefined): CrawlSpec | undefined {
  if (!json) return undefined;
  try {
    const s = JSON.parse(json) as CrawlSpec;
    return typeof s.seed === 'string' && typeof s.limit === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}
