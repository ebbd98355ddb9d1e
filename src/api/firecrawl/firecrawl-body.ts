/**
 * The /v2 routes' validation: the Firecrawl body, once translated to sift's field names, is checked
 * by sift's own DTO with the app's pipe (the same rules, limits and 400s as on /v1). Its 400 names
 * the fields as the caller sent them (Firecrawl's names).
 */
import type { Type } from '@nestjs/common';
import { SiftError } from '../../common/errors';
import { commandOf } from '../../commands';

/** sift's field names, as Firecrawl names them (`options` is a batch's own scrape options). */
const FIRECRAWL_NAMES: Record<string, string> = {
  targets: 'urls',
  ignore_invalid_urls: 'ignoreInvalidURLs',
  include_selectors: 'includeTags',
  exclude_selectors: 'excludeTags',
  wait_ms: 'waitFor',
  timeout_ms: 'timeout',
  max_age_s: 'maxAge (in seconds)',
  max_depth: 'maxDiscoveryDepth',
  include_paths: 'includePaths',
  exclude_paths: 'excludePaths',
  include_regex: 'includePaths',
  exclude_regex: 'excludePaths',
  allow_subdomains: 'allowSubdomains',
  allow_external: 'allowExternalLinks',
  ignore_query: 'ignoreQueryParameters',
  chunk_tokens: 'formats: chunks.chunkTokens',
  chunk_overlap: 'formats: chunks.chunkOverlap',
};

/** A message of sift's with its field names as Firecrawl's; a crawl's `options.` is `scrapeOptions.`. */
export function firecrawlNames(message: string, optionsAs: string): string {
  return message
    .replace(/\boptions\.(?=\w)/g, optionsAs)
    .replace(/\b[a-z]+(?:_[a-z0-9]+)+\b|\btargets\b/g, (w) => FIRECRAWL_NAMES[w] ?? w);
}

/** The translated body as the DTO's instance, or sift's 400 naming the bad fields as Firecrawl does. */
export function siftBody<T extends object>(
  dto: Type<T>,
  body: Record<string, unknown>,
  optionsAs = '',
): Promise<T> {
  return inFirecrawlNames(() => commandOf(dto, body), optionsAs);
}

/** A call to sift's services whose errors name the fields as the caller named them (Firecrawl's). */
export async function inFirecrawlNames<T>(call: () => Promise<T>, optionsAs = ''): Promise<T> {
  try {
    return await call();
  } catch (err) {
    // Renamed in place: the error keeps its class, status and headers (a 429's Retry-After).
    if (err instanceof SiftError) err.message = firecrawlNames(err.message, optionsAs);
    throw err;
  }
}
