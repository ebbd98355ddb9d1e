import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { FetchError } from '../common/errors';
import { truncateUtf8 } from '../common/truncate';
import { callerKeyOf, ContentCache, sha256Hex, type CachedPage } from '../dcache';
import { decodeBody, mediaType, pageKind } from '../fetch/decode';
import type { RawPage } from '../fetch/fetcher';
import type { Upstream } from '../fetch/upstream';
import type { ExtractOptions, Format } from '../extract/extract';
import type { ExtractPool } from '../extract/extract-pool';
import type { Link } from '../extract/links';
import type { Metadata } from '../extract/metadata';
import { verdictOf, type Verdict } from '../extract/verdict';
import type { Caller } from './caller-policy';
import type { FetchEnvelope } from './envelope';
import { linksWithin } from './links-budget';

/** What the cache keeps beside the content: the envelope's fields, and validators to revalidate it. */
export type PageMeta = Pick<
  FetchEnvelope,
  'url' | 'final_url' | 'status' | 'content_type' | 'title' | 'format' | 'truncated'
> & {
  verdict?: Verdict;
  etag?: string;
  last_modified?: string;
  metadata?: Metadata;
  links?: Link[];
};

/** A page as the cache holds it (or as it was just fetched), before the caller's cap. */
export interface Page {
  meta: PageMeta;
  content: string;
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
  format: Format;
  extract: ExtractOptions;
  caller: Caller;
  headers: Record<string, string>;
  robots: boolean;
  signal: AbortSignal;
  /** Wait for room in a full extraction queue instead of answering 503 server_busy. */
  waitForExtraction?: boolean;
  /** A copy held with validators: the request is conditional, and a 304 confirms it. */
  stale?: CachedPage;
}

/** Answers that say "try later": never cached. */
const TRANSIENT_STATUS = new Set([429, 502, 503, 504]);

/**
 * A page from upstream into the cache: fetched (see Upstream), decoded, extracted in the worker
 * pool (HTML) or kept as text, cut to the largest class cap, given a verdict, and stored.
 */
export class PageLoader {
  private readonly log = new Logger('fetch');

  private readonly upstream: Upstream;
  private readonly extractor: ExtractPool;
  private readonly cache: ContentCache;
  private readonly clock: Clock;
  /** The cache keeps content up to the largest class cap; each answer is cut to its own cap. */
  private readonly storeCap: number;

  constructor(parts: {
    upstream: Upstream;
    extractor: ExtractPool;
    cache: ContentCache;
    clock: Clock;
    storeCap: number;
  }) {
    ({
      upstream: this.upstream,
      extractor: this.extractor,
      cache: this.cache,
      clock: this.clock,
      storeCap: this.storeCap,
    } = parts);
  }

  async load(req: PageRequest): Promise<Page> {
    const { caller, stale, format } = req;
    const staleMeta = stale?.meta as PageMeta | undefined;
    // A conditional request: a 304 confirms the copy held (the caller's own headers stand).
    const headers = staleMeta
      ? {
          ...(staleMeta.etag ? { 'if-none-match': staleMeta.etag } : {}),
          ...(staleMeta.last_modified ? { 'if-modified-since': staleMeta.last_modified } : {}),
          ...req.headers,
        }
      : req.headers;
    const raw = await this.upstream.get({
      url: req.url,
      callerClass: caller.callerClass,
      who: callerKeyOf(caller),
      headers,
      robots: req.robots,
      signal: req.signal,
    });
    if (raw.status === 304 && stale && staleMeta) return this.revalidated(req.key, stale, staleMeta, raw);
    const kind = pageKind(raw.contentType, raw.body);
    const ok = raw.status >= 200 && raw.status < 300;
    if (!kind && ok) {
      throw new FetchError(
        'unsupported_content_type',
        `${raw.finalUrl} is ${mediaType(raw.contentType) || 'of no declared type'}`,
      );
    }
    let title = '';
    let content = '';
    let html = '';
    let metadata: Metadata | undefined;
    let links: Link[] | undefined;
    let linksCut = false;
    let pageText: string | undefined;
    if (kind === 'html') {
      html = decodeBody(raw.body, raw.contentType, true);
      const x = await this.extractor.extract(html, raw.finalUrl, format, {
        wait: req.waitForExtraction,
        extract: req.extract,
        caller: callerKeyOf(caller),
      });
      ({ title, content, metadata, links, pageText } = x);
      linksCut = x.linksTruncated === true;
    } else if (kind) {
      content = decodeBody(raw.body, raw.contentType, false);
    }
    const stored = truncateUtf8(content, this.storeCap);
    // The links are kept within what the content leaves of the largest cap, as an answer is.
    const kept = links && linksWithin(links, this.storeCap - stored.bytes);
    const meta: PageMeta = {
      url: req.url.href,
      final_url: raw.finalUrl,
      status: raw.status,
      content_type: raw.contentType,
      title,
      format,
      truncated: stored.truncated || linksCut || (kept?.cut ?? false),
      // The page is judged, not the caller's selection of it.
      verdict: verdictOf({
        status: raw.status,
        html,
        title,
        content: pageText ?? content,
        isHtml: kind === 'html',
      }),
      ...(raw.etag ? { etag: raw.etag } : {}),
      ...(raw.lastModified ? { last_modified: raw.lastModified } : {}),
      ...(metadata ? { metadata } : {}),
      ...(kept ? { links: kept.links } : {}),
    };
    const fetchedAt = this.clock.now();
    let digest: string | undefined;
    if (!TRANSIENT_STATUS.has(raw.status)) {
      // The page is already in hand: a cache that cannot store it (a full disk) must not lose it.
      digest = await this.cache
        .put(req.key, stored.text, meta as unknown as Record<string, unknown>, fetchedAt)
        .catch((err: Error) => {
          this.log.warn(`page not cached: ${err.message}`);
          return undefined;
        });
    }
    return {
      meta,
      content: stored.text,
      digest: digest ?? sha256Hex(stored.text),
      fetchedAt,
      cached: false,
      retryAfterS: raw.retryAfterS,
    };
  }

  /** The site answered 304 to a conditional request: the copy held is current again. */
  private async revalidated(key: string, stale: CachedPage, meta: PageMeta, raw: RawPage): Promise<Page> {
    const fetchedAt = this.clock.now();
    const fresh: PageMeta = {
      ...meta,
      ...(raw.etag ? { etag: raw.etag } : {}),
      ...(raw.lastModified ? { last_modified: raw.lastModified } : {}),
    };
    let digest = stale.digest;
    await this.cache.put(key, stale.body, fresh as unknown as Record<string, unknown>, fetchedAt).then(
      (d) => (digest = d),
      (err: Error) => this.log.warn(`revalidated page not cached: ${err.message}`),
    );
    return { meta: fresh, content: stale.body, digest, fetchedAt, cached: true, revalidated: true };
  }
}
