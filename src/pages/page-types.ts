import type { OcrMode } from '../documents';
import type { CachedPage } from '../dcache';
import type { ExtractOptions, Format } from '../extract/extract';
import type { Link } from '../extract/links';
import type { Metadata } from '../extract/metadata';
import type { Verdict } from '../extract/verdict';
import type { BrowserMeta, RenderAsk } from './browser-step';
import type { Caller } from './caller-policy';
import type { FetchEnvelope } from './envelope';
import type { Cookies } from './cookies';
import type { EgressProxy } from '../config/parsers';

/** How a page's source is written in each format (see Page.source). */
export type SourceKind = 'html' | 'json' | 'text' | 'pdf' | 'office' | 'image';

/** Whether the source is a document read by the parser (its html written from what it read). */
export const isDocument = (k: SourceKind | undefined): boolean =>
  k === 'pdf' || k === 'office' || k === 'image';

/** A format written from an html source (or a document), as the cache keeps it. */
export interface StoredFormat {
  text: string;
  digest: string;
  /** Cut at the cache's cap (or written from a source that was). */
  truncated: boolean;
  /** Its tokens (common/tokens.ts), once counted. */
  tokens?: number;
}

/**
 * What the cache keeps beside the page's source: the envelope's fields, the formats written from
 * it so far, and validators to revalidate it.
 */
export type PageMeta = Pick<FetchEnvelope, 'url' | 'final_url' | 'status' | 'content_type' | 'title'> & {
  kind?: SourceKind;
  /** The source was cut at the cache's cap. */
  truncated: boolean;
  /** The source's tokens, once counted (a JSON or text page's content, an html page's html). */
  source_tokens?: number;
  /** Some links were left out, at the extraction's bounds or the cache's cap. */
  links_cut?: boolean;
  /** An html source in markdown and text, as far as asked for yet (html is the source itself). */
  formats?: Partial<Record<Exclude<Format, 'html'> | 'raw_html', StoredFormat>>;
  verdict?: Verdict;
  verdict_hint?: string;
  etag?: string;
  last_modified?: string;
  metadata?: Metadata;
  /** The whole page's links (a crawl follows them; an answer lists them when asked). */
  links?: Link[];
} & BrowserMeta;

/**
 * A page's meta as the cache returns it: the same object, so an answer built from it is known
 * again by identity (PageService's answers). Copies stored before the formats were named keep
 * them under `rendered`: moved to `formats` in place, once.
 */
export function pageMetaOf(stored: Record<string, unknown>): PageMeta {
  if ('rendered' in stored) {
    stored.formats ??= stored.rendered;
    delete stored.rendered;
  }
  return stored as unknown as PageMeta;
}

/**
 * A page as the cache holds it (or as it was just fetched), before the caller's cap: one fetch,
 * one extraction, written in any format from it.
 */
export interface Page {
  meta: PageMeta;
  /**
   * An html page's article as html (its html format, from which the others are written again
   * without fetching or extracting the page), or a JSON or text page's text.
   */
  source: string;
  /** Of the source. */
  digest: string;
  fetchedAt: number;
  cached: boolean;
  /** A stale copy the site confirmed (304). */
  revalidated?: boolean;
  retryAfterS?: number;
}

export interface PageRequest {
  /** The cache key it is stored under. */
  key: string;
  url: URL;
  /** The formats to write the page in now (html pages: others are written from the source later). */
  formats: Format[];
  extract: ExtractOptions;
  /** The caller's cookies, sent where their scope says (static fetch and render). */
  cookies?: Cookies;
  /** The egress proxy every connection of the page goes through (static fetch and render). */
  proxy?: EgressProxy;
  /** Keep the html as served (an html page's; after a render, the browser's). */
  raw?: boolean;
  caller: Caller;
  headers: Record<string, string>;
  robots: boolean;
  signal: AbortSignal;
  /** Wait for room in a full extraction queue instead of answering 503 server_busy. */
  waitForExtraction?: boolean;
  /** A copy held with validators: the request is conditional, and a 304 confirms it. */
  stale?: CachedPage;
  /** Rendering in Chromium, as asked (none: never). */
  render?: RenderAsk;
  /** A document's pages to read ("1-5,9"; all when absent) and when the request's time is up (epoch ms). */
  document?: { pages?: string; deadline: number; ocr?: OcrMode };
}
