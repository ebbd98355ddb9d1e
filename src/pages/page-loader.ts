import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { FetchError, invalidRequest } from '../common/errors';
import { callerKeyOf, ContentCache, sha256Hex, type CachedPage } from '../dcache';
import { decodeBody, mediaType, pageKind } from '../fetch/decode';
import type { RawPage } from '../fetch/fetcher';
import type { Upstream } from '../fetch/upstream';
import type { Extraction, Format } from '../extract/extract';
import type { ExtractPool } from '../extract/extract-pool';
import { verdictOf } from '../extract/verdict';
import type { BrowserStep } from './browser-step';
import type { DocumentStep } from './document-step';
import type { Caller } from './caller-policy';
import { cutFormats, keptOf, readText, type Read } from './kept';
import {
  isDocument,
  pageMetaOf,
  type Page,
  type PageMeta,
  type PageRequest,
  type SourceKind,
} from './page-types';

export type { Page, PageMeta, PageRequest, SourceKind, StoredFormat } from './page-types';

/** Answers that say "try later": never cached. */
const TRANSIENT_STATUS = new Set([429, 502, 503, 504]);

/**
 * A page from upstream into the cache: fetched (see Upstream), decoded, extracted in the worker
 * pool (HTML: its article as html, and in the formats asked for) or kept as text, cut to the
 * largest class cap, given a verdict, and stored.
 */
export class PageLoader {
  private readonly log = new Logger('fetch');

  private readonly upstream: Upstream;
  private readonly extractor: ExtractPool;
  private readonly cache: ContentCache;
  private readonly clock: Clock;
  /** The cache keeps content up to the largest class cap; each answer is cut to its own cap. */
  private readonly storeCap: number;
  private readonly browser?: BrowserStep;
  private readonly documents?: DocumentStep;

  constructor(parts: {
    browser?: BrowserStep;
    documents?: DocumentStep;
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
      browser: this.browser,
      documents: this.documents,
    } = parts);
  }

  /**
   * The pipeline, a step each: fetch (conditional when a copy with validators is held; a 304
   * confirms it), check the kind, read the body (an html page extracted, rendered when it asks
   * for a browser, extracted again; a document read by its parser; text kept), judge it once per
   * body read (the verdict), write the formats and cut them to the cache's cap, store.
   */
  async load(req: PageRequest): Promise<Page> {
    const staleMeta = req.stale && pageMetaOf(req.stale.meta);
    const raw = await this.fetch(req, staleMeta);
    if (raw.status === 304 && req.stale && staleMeta)
      return this.revalidated(req.key, req.stale, staleMeta, raw);
    const { stored, meta } = await this.read(req, raw);
    return this.store(req.key, stored, meta, raw.retryAfterS);
  }

  /**
   * A file sent to be read (POST /v1/parse): the same steps from its kind on, the answer as if a
   * server had sent it; not cached (nobody else asks for the same upload by a URL).
   */
  async loadUpload(req: PageRequest, raw: RawPage): Promise<Page> {
    const { stored, meta } = await this.read(req, raw);
    return {
      meta,
      source: stored.text,
      digest: sha256Hex(stored.text),
      fetchedAt: this.clock.now(),
      cached: false,
    };
  }

  /** The body read by its kind, judged and written in its formats, cut to the cache's cap. */
  private async read(req: PageRequest, raw: RawPage) {
    const ok = raw.status >= 200 && raw.status < 300;
    const kind = this.kindOf(raw, req, ok);
    const read =
      kind === 'html'
        ? await this.readHtml(raw, req, ok)
        : isDocument(kind)
          ? await this.readDocument(raw, req, ok)
          : readText(raw, kind);
    return keptOf(req, raw, kind, read, this.storeCap);
  }

  /** The page from upstream; conditional when a copy with validators is held (the caller's headers stand). */
  private fetch(req: PageRequest, stale: PageMeta | undefined): Promise<RawPage> {
    const headers = stale
      ? {
          ...(stale.etag ? { 'if-none-match': stale.etag } : {}),
          ...(stale.last_modified ? { 'if-modified-since': stale.last_modified } : {}),
          ...req.headers,
        }
      : req.headers;
    return this.upstream.get({
      url: req.url,
      callerClass: req.caller.callerClass,
      who: callerKeyOf(req.caller),
      headers,
      cookies: req.cookies?.header,
      proxy: req.proxy,
      robots: req.robots,
      signal: req.signal,
    });
  }

  /** What the body is; a screenshot of anything but html, or a kind sift does not read, is refused. */
  private kindOf(raw: RawPage, req: PageRequest, ok: boolean): SourceKind | undefined {
    const kind = pageKind(raw.contentType, raw.body);
    const type = mediaType(raw.contentType) || 'of no declared type';
    // A screenshot or actions are of a rendered html page: asked of a document or a file, refused.
    const needs = req.render?.screenshot ? 'screenshot' : req.render?.actions?.length ? 'actions' : '';
    if (needs && kind !== 'html' && ok) {
      throw invalidRequest(
        `${needs === 'actions' ? 'actions are taken on' : 'screenshot is taken of'} html pages; ${raw.finalUrl} is ${type}`,
        `leave ${needs} out for documents and other files`,
      );
    }
    if ((!kind || (isDocument(kind) && !this.documents)) && ok) {
      throw new FetchError('unsupported_content_type', `${raw.finalUrl} is ${type}`);
    }
    return kind;
  }

  /**
   * An html page: extracted and judged; rendered when it asks for a browser (`always`: whatever
   * the static page is, so it is not extracted first), then the browser's page extracted and
   * judged. The page is judged, not the caller's selection.
   */
  private async readHtml(raw: RawPage, req: PageRequest, ok: boolean): Promise<Read> {
    let html = decodeBody(raw.body, raw.contentType, true);
    let { finalUrl, status } = raw;
    const judge = (x: Extraction) =>
      verdictOf({ status, html, title: x.title, content: x.pageText ?? x.content, isHtml: true });
    const always = ok && req.render?.mode === 'always' && this.browser !== undefined;
    let x = always ? undefined : await this.extract(html, finalUrl, req);
    let verdict = x && judge(x);
    const r = ok ? await this.browser?.maybeRender({ html, finalUrl, status, raw, verdict }, req) : undefined;
    if (r) ({ html, finalUrl, status } = r);
    if (r || !x) {
      x = await this.extract(html, finalUrl, req);
      verdict = judge(x);
    }
    return {
      html,
      finalUrl,
      status,
      verdict: verdict!,
      title: x.title,
      content: x.content,
      written: x.contents ?? { [req.formats[0] ?? 'html']: x.content },
      metadata: x.metadata,
      links: x.links,
      linksCut: x.linksTruncated === true,
      ...(req.raw ? { raw: html } : {}),
      shown: r?.shown,
    };
  }

  /**
   * A document: its text in every format at once, in the parser's limited processes. One answered
   * with an error status is not read: its envelope says the status, no text.
   */
  private async readDocument(raw: RawPage, req: PageRequest, ok: boolean): Promise<Read> {
    const deadline = req.document?.deadline ?? Date.now() + 60_000;
    const doc = ok
      ? await this.documents!.read(raw.body, {
          ...req.document,
          deadline,
          signal: req.signal,
          caller: callerKeyOf(req.caller),
          mediaType: mediaType(raw.contentType),
        })
      : undefined;
    const title = doc?.title ?? '';
    return {
      html: '',
      finalUrl: raw.finalUrl,
      status: raw.status,
      verdict: doc?.verdict ?? verdictOf({ status: raw.status, html: '', title, content: '', isHtml: false }),
      title,
      content: '',
      written: { html: doc?.html ?? '', markdown: doc?.markdown ?? '', text: doc?.text ?? '' },
      metadata: doc?.metadata,
      doc,
    };
  }

  /** Into the cache, unless the answer says "try later"; a cache that cannot store it (a full disk) does not lose it. */
  private async store(
    key: string,
    stored: { text: string },
    meta: PageMeta,
    retryAfterS: number | undefined,
  ): Promise<Page> {
    const fetchedAt = this.clock.now();
    let digest: string | undefined;
    if (!TRANSIENT_STATUS.has(meta.status)) {
      digest = await this.cache
        .put(key, stored.text, meta as unknown as Record<string, unknown>, fetchedAt)
        .catch((err: Error) => {
          this.log.warn(`page not cached: ${err.message}`);
          return undefined;
        });
    }
    return {
      meta,
      source: stored.text,
      digest: digest ?? sha256Hex(stored.text),
      fetchedAt,
      cached: false,
      retryAfterS,
    };
  }

  /**
   * An html page in formats its cached copy was not written in yet, written from its source in
   * the worker pool (the page is neither fetched nor extracted again) and kept with it.
   */
  async writeFormats(
    key: string,
    page: Page,
    formats: Exclude<Format, 'html'>[],
    opts: { caller: Caller; wait?: boolean },
  ): Promise<Page> {
    const x = await this.extractor.extract(page.source, page.meta.final_url, formats[0], {
      wait: opts.wait,
      extract: { formats },
      caller: callerKeyOf(opts.caller),
      article: true,
    });
    const meta: PageMeta = {
      ...page.meta,
      formats: { ...page.meta.formats, ...cutFormats(x.contents ?? {}, page.meta.truncated, this.storeCap) },
    };
    if (!TRANSIENT_STATUS.has(meta.status)) {
      // Kept with the fetch time it had: writing a format does not make the page fresher.
      await this.cache
        .put(key, page.source, meta as unknown as Record<string, unknown>, page.fetchedAt)
        .catch((err: Error) => this.log.warn(`page formats not cached: ${err.message}`));
    }
    return { ...page, meta };
  }

  /** An html page's article and formats, in the worker pool. */
  private extract(html: string, url: string, req: PageRequest): Promise<Extraction> {
    return this.extractor.extract(html, url, req.formats[0] ?? 'html', {
      wait: req.waitForExtraction,
      // The links are always listed: a later call that asks for them is answered from the cache.
      extract: { ...req.extract, links: true, formats: req.formats },
      caller: callerKeyOf(req.caller),
      signal: req.signal,
    });
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
    return { meta: fresh, source: stale.body, digest, fetchedAt, cached: true, revalidated: true };
  }
}
