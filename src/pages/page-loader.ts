import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { FetchError, invalidRequest } from '../common/errors';
import { truncateUtf8 } from '../common/truncate';
import { callerKeyOf, ContentCache, sha256Hex, type CachedPage } from '../dcache';
import { decodeBody, mediaType, pageKind } from '../fetch/decode';
import type { RawPage } from '../fetch/fetcher';
import type { Upstream } from '../fetch/upstream';
import type { Extraction, Format } from '../extract/extract';
import type { ExtractPool } from '../extract/extract-pool';
import type { Link } from '../extract/links';
import type { Metadata } from '../extract/metadata';
import { verdictOf, type Verdict } from '../extract/verdict';
import type { BrowserMeta, BrowserStep } from './browser-step';
import type { DocumentStep, ReadDocument } from './document-step';
import { linksWithin } from './links-budget';
import type { Caller } from './caller-policy';
import type { Page, PageMeta, PageRequest } from './page-types';

export type { Page, PageMeta, PageRequest, Rendering, SourceKind } from './page-types';

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

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

  async load(req: PageRequest): Promise<Page> {
    const { caller, stale, formats } = req;
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
    // A screenshot is of a rendered html page: asked of a document or a file, it is refused.
    if (req.render?.screenshot && kind !== 'html' && ok) {
      throw invalidRequest(
        `screenshot is taken of html pages; ${raw.finalUrl} is ${mediaType(raw.contentType) || 'of no declared type'}`,
        'leave screenshot out for documents and other files',
      );
    }
    if ((!kind || (kind === 'pdf' && !this.documents)) && ok) {
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
    let pageLinks: Link[] | undefined;
    let linksCut = false;
    let pageText: string | undefined;
    let written: Partial<Record<Format, string>> = {};
    let { finalUrl, status } = raw;
    let shown: BrowserMeta = {};
    // The page is judged, not the caller's selection: auto renders by it; unrendered, it stands.
    let verdict: Verdict | undefined;
    let doc: ReadDocument | undefined;
    if (kind === 'html') {
      html = decodeBody(raw.body, raw.contentType, true);
      // `always` renders whatever the static page is: only what the browser shows is extracted.
      const always = ok && req.render?.mode === 'always' && this.browser !== undefined;
      let x = always ? undefined : await this.extract(html, finalUrl, req);
      verdict =
        x && verdictOf({ status, html, title: x.title, content: x.pageText ?? x.content, isHtml: true });
      const r = ok
        ? await this.browser?.maybeRender({ html, finalUrl, status, raw, verdict }, req)
        : undefined;
      if (r) ({ html, finalUrl, status, shown } = r);
      if (r || !x) {
        x = await this.extract(html, finalUrl, req);
        verdict = undefined;
      }
      ({ title, content, metadata, links, pageText, pageLinks } = x);
      written = x.contents ?? { [formats[0] ?? 'html']: x.content };
      linksCut = x.linksTruncated === true;
    } else if (kind === 'pdf') {
      // A document: its text in every format at once, in the parser's limited processes.
      const deadline = req.document?.deadline ?? Date.now() + 60_000;
      doc = ok
        ? await this.documents!.read(raw.body, {
            ...req.document,
            deadline,
            signal: req.signal,
            caller: callerKeyOf(caller),
          })
        : undefined;
      if (doc) ({ title, metadata, verdict } = doc);
      // A PDF answered with an error status is not read: its envelope says the status, no text.
      written = { html: doc?.html ?? '', markdown: doc?.markdown ?? '', text: doc?.text ?? '' };
    } else if (kind) {
      content = decodeBody(raw.body, raw.contentType, false);
    }
    const formatted = kind === 'html' || kind === 'pdf';
    const stored = truncateUtf8(formatted ? (written.html ?? content) : content, this.storeCap);
    const cut = stored.truncated || doc?.truncated === true;
    const rendered = formatted ? this.renderings(written, cut) : undefined;
    // The links are kept within what the shortest format leaves of the largest cap, as an answer is.
    const shortest = Math.min(stored.bytes, ...Object.values(rendered ?? {}).map((r) => byteLength(r.text)));
    const kept = links && linksWithin(links, this.storeCap - shortest);
    const whole = pageLinks && linksWithin(pageLinks, this.storeCap);
    verdict ??= verdictOf({ status, html, title, content: pageText ?? content, isHtml: kind === 'html' });
    const meta: PageMeta = {
      url: req.url.href,
      final_url: finalUrl,
      status,
      content_type: raw.contentType,
      title,
      kind: kind ?? 'text',
      truncated: cut,
      ...(linksCut || kept?.cut ? { links_cut: true } : {}),
      ...(rendered ? { rendered } : {}),
      verdict,
      ...(doc?.hint ? { verdict_hint: doc.hint } : {}),
      ...(raw.etag ? { etag: raw.etag } : {}),
      ...(raw.lastModified ? { last_modified: raw.lastModified } : {}),
      ...(metadata ? { metadata } : {}),
      ...(kept ? { links: kept.links } : {}),
      ...(whole ? { page_links: whole.links } : {}),
      ...shown,
    };
    const fetchedAt = this.clock.now();
    let digest: string | undefined;
    if (!TRANSIENT_STATUS.has(status)) {
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
      source: stored.text,
      digest: digest ?? sha256Hex(stored.text),
      fetchedAt,
      cached: false,
      retryAfterS: raw.retryAfterS,
    };
  }

  /**
   * An html page in formats its cached copy was not written in yet, written from its source in
   * the worker pool (the page is neither fetched nor extracted again) and kept with it.
   */
  async render(
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
    const rendered = { ...page.meta.rendered, ...this.renderings(x.contents ?? {}, page.meta.truncated) };
    const meta: PageMeta = { ...page.meta, rendered };
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

  /** Markdown and text of an html page as the cache keeps them: each cut to the largest cap. */
  private renderings(
    written: Partial<Record<Format, string>>,
    sourceCut: boolean,
  ): NonNullable<PageMeta['rendered']> {
    const out: NonNullable<PageMeta['rendered']> = {};
    for (const f of ['markdown', 'text'] as const) {
      const text = written[f];
      if (text === undefined) continue;
      const cut = truncateUtf8(text, this.storeCap);
      out[f] = { text: cut.text, digest: sha256Hex(cut.text), truncated: cut.truncated || sourceCut };
    }
    return out;
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
