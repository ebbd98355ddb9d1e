import type { Format } from '../extract/extract';
import type { PageAction } from '../render/render-types';
import type { AskedFormat } from './answer';
import type { RenderMode } from './browser-step';
import type { CookiesAsk } from './cookies';
import type { FetchEnvelope } from './envelope';
import type { PageMeta } from './page-types';
import type { Link } from '../extract/links';
import { linkBytes } from './links-budget';

/** What one fetch asks: POST /v1/fetch's body, a batch target's options with its URL. */
export interface FetchParams {
  url: string;
  /** `content`'s format. */
  format?: Format;
  /** Formats for `formats` (and "links"), from the same fetch and extraction. */
  formats?: AskedFormat[];
  timeout_ms?: number;
  max_bytes?: number;
  /** `metadata.tokens`: the content's tokens. */
  tokens?: boolean;
  /** Cap on the tokens of the texts sent, shared as max_bytes is. */
  max_tokens?: number;
  /** With "chunks" in `formats`: tokens a piece, and of the piece before that begin the next. */
  chunk_tokens?: number;
  chunk_overlap?: number;
  max_age_s?: number;
  headers?: Record<string, string>;
  /** false: robots.txt is not asked (fleet callers only). */
  robots?: boolean;
  links?: boolean;
  include_selectors?: string[];
  exclude_selectors?: string[];
  render?: RenderMode;
  wait_for?: string;
  wait_ms?: number;
  screenshot?: boolean;
  full_page?: boolean;
  /** Steps taken on the rendered page (a render is asked). */
  actions?: PageAction[];
  /** Cookies for the URL's site: a Cookie header's value, or a list (pages/cookies.ts). */
  cookies?: CookiesAsk;
  /** One of the caller's browser profiles; `save` keeps the render's state in it. */
  profile?: { name: string; save?: boolean };
  /** An egress proxy's name (SIFT_PROXIES). */
  proxy?: string;
  /** A document's pages to read ("1-5,9"): a PDF's, slides, sheets, chapters. */
  pages?: string;
  /** OCR of images and scanned pages: auto (absent), always, never. */
  ocr?: 'auto' | 'always' | 'never';
}

export interface FetchOutcome {
  envelope: FetchEnvelope;
  /** Seconds the upstream asked to wait before trying again (429/503), when it said. */
  retryAfterS?: number;
  /** A cache hit's answer, kept with what each writer made of it (see PageService.answers). */
  answer?: Answer;
  /** The whole page's links, as the cache keeps them (a crawl and a map follow them). */
  pageLinks?: Link[];
}

/**
 * A cache hit's answer: everything in it follows from the cached page (named by its digest, its
 * fetch time and its stored fields), the formats asked, the URL as the caller wrote it and the
 * output cap; the cache key holds the rest (caller class, headers, robots, extraction options).
 */
export interface Answer {
  /** Its place in PageService.answers. */
  key: string;
  digest: string;
  fetchedAt: number;
  meta: PageMeta;
  envelope: FetchEnvelope;
  /** The envelope as each writer wrote it (/v1/fetch's JSON, a Firecrawl document…), by writer. */
  written: ReadonlyMap<string, Written>;
}

/** An answer as a route sends it: its bytes, or a text another layer sends. */
export type Written = Buffer | string;

export const writtenSize = (w: Written) => (typeof w === 'string' ? w.length * 2 : w.length);

/** About the bytes an answer holds in memory: what it was written as, and its envelope's texts. */
export function answerBytes(a: Answer): number {
  const e = a.envelope;
  const texts = Object.values(e.formats ?? {}).reduce(
    (n, t) =>
      n +
      (typeof t === 'string' ? t.length : t.reduce((m: number, c: { text: string }) => m + c.text.length, 0)),
    0,
  );
  return (
    [...a.written.values()].reduce((n, w) => n + writtenSize(w), 0) +
    (e.content.length + texts) * 2 +
    (e.screenshot?.data.length ?? 0) +
    (e.actions ? JSON.stringify(e.actions).length : 0) +
    (e.links ?? []).reduce((n, l) => n + linkBytes(l) * 2, 0)
  );
}

/**
 * What stops the caller's wait: a signal, or what makes one when a wait begins (a cache hit never
 * waits, so it never pays for one).
 */
export type CallerSignal = AbortSignal | (() => AbortSignal);

export interface FetchCallOptions {
  /** Wait for room in a full extraction queue instead of answering 503 server_busy (the runner). */
  waitForExtraction?: boolean;
  /** A job's target ('job:idx'): tried again, it is told the changes its first try was (see ChangeTracker). */
  target?: string;
}
