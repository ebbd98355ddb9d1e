import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig, type CallerClass } from '../config/app-config';
import { Clock } from '../common/clock';
import { Metrics } from '../common/metrics';
import { FetchError, InternalFault, SiftError, forbidden } from '../common/errors';
import { ContentCache, HostStore, sha256Hex, type CachedPage } from '../dcache';
import { verdictOf, type Verdict } from './verdict';
import { Robots } from './robots';
import { HostSlots } from './host-slots';
import { decodeBody, mediaType, pageKind } from './decode';
import type { ExtractOptions, Format } from './extract';
import { NO_METADATA, type Metadata } from './metadata';
import type { FetchEnvelope } from './envelope';
import { ExtractPool } from './extract-pool';
import { Fetcher, parseHttpUrl, type RawPage } from './fetcher';
import { SingleFlight, type Waiter } from './single-flight';
import { SizedLru } from '../common/sized-lru';
import { truncateUtf8 } from './truncate';

export const DEFAULT_TIMEOUT_MS = 15_000;
/** The longest a caller may ask for; a shared upstream fetch runs at most this long. */
export const MAX_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_AGE_S = 3600;

export interface Caller {
  name: string;
  callerClass: CallerClass;
}

export interface FetchParams {
  url: string;
  format?: Format;
  timeout_ms?: number;
  max_bytes?: number;
  max_age_s?: number;
  headers?: Record<string, string>;
  /** false: robots.txt is not asked (fleet callers only). */
  robots?: boolean;
  links?: boolean;
  include_selectors?: string[];
  exclude_selectors?: string[];
}

/** What the cache keeps beside the content: the envelope's fields, and validators to revalidate it. */
type PageMeta = Pick<
  FetchEnvelope,
  'url' | 'final_url' | 'status' | 'content_type' | 'title' | 'format' | 'truncated'
> & {
  verdict?: Verdict;
  etag?: string;
  last_modified?: string;
  metadata?: Metadata;
  links?: { url: string; text: string }[];
};

interface Page {
  meta: PageMeta;
  content: string;
  digest: string;
  fetchedAt: number;
  cached: boolean;
  /** A stale copy the site confirmed (304). */
  revalidated?: boolean;
  retryAfterS?: number;
}

export interface FetchOutcome {
  envelope: FetchEnvelope;
  /** Seconds the upstream asked to wait before trying again (429/503), when it said. */
  retryAfterS?: number;
  /** A cache hit's answer, kept with its JSON once written (see FetchService.answers). */
  answer?: Answer;
}

/**
 * A cache hit's answer: everything in it follows from the cached page (named by its digest, its
 * fetch time and its stored fields), the URL as the caller wrote it and the output cap; the cache
 * key holds the rest (caller class, format, headers, robots, extraction options).
 */
interface Answer {
  /** Its place in FetchService.answers. */
  key: string;
  digest: string;
  fetchedAt: number;
  meta: PageMeta;
  envelope: FetchEnvelope;
  /** The envelope as UTF-8 JSON, once written. */
  json?: Buffer;
}

/**
 * What stops the caller's wait: a signal, or what makes one when a wait begins (a cache hit never
 * waits, so it never pays for one).
 */
export type CallerSignal = AbortSignal | (() => AbortSignal);

export interface FetchCallOptions {
  /** Wait for room in a full extraction queue instead of answering 503 server_busy (the runner). */
  waitForExtraction?: boolean;
}

/** Answers that say "try later": never cached. */
const TRANSIENT_STATUS = new Set([429, 502, 503, 504]);

/** Headers sift sets itself or that would change the transport; callers may not send them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
  'expect',
]);

/**
 * One URL to one envelope: the content cache in front (keyed by caller class, normalised URL and
 * the options that change the output), one upstream fetch per key at a time, extraction, and the
 * output cap.
 */
@Injectable()
export class FetchService {
  private readonly flights = new SingleFlight<Page>();
  private readonly log = new Logger('fetch');
  /** The cache keeps content up to the largest class cap; each answer is cut to its own cap. */
  private readonly storeCap: number;
  /** Escaped contents of pages served from the cache. */
  /**
   * The answers of recent cache hits, by cache key, cap and URL as given: a page asked for again
   * is answered with the bytes written the first time (building and escaping the envelope is most
   * of the cost of a hit). An entry counts only while the cache hands out the same page.
   */
  private readonly answers = new SizedLru<Answer>(
    16 * 1024 * 1024,
    (a) => (a.json?.length ?? 0) + a.envelope.content.length * 2,
  );
  /** Upstream fetches per host in this process: SIFT_PER_HOST_CONCURRENCY for all work together. */
  readonly slots: HostSlots;

  constructor(
    private readonly config: AppConfig,
    private readonly cache: ContentCache,
    private readonly clock: Clock,
    @Inject(Fetcher) private readonly fetcher: Fetcher,
    private readonly extractor: ExtractPool,
    private readonly metrics: Metrics,
    private readonly robots: Robots,
    private readonly hosts: HostStore,
  ) {
    this.storeCap = Math.max(config.limits.fleet.outputCap, config.limits.restricted.outputCap);
    this.slots = new HostSlots(config.perHostConcurrency);
  }

  /**
   * The envelope as UTF-8 JSON, what POST /v1/fetch sends. A cache hit answered before is sent
   * as it was written then.
   */
  async fetchJson(caller: Caller, p: FetchParams, signal?: CallerSignal): Promise<Buffer> {
    const { envelope, answer } = await this.fetchDetailed(caller, p, signal);
    if (answer?.json) return answer.json;
    const json = Buffer.from(JSON.stringify(envelope));
    if (answer) this.answers.set(answer.key, { ...answer, json });
    return json;
  }

  async fetchDetailed(
    caller: Caller,
    p: FetchParams,
    signal?: CallerSignal,
    opts: FetchCallOptions = {},
  ): Promise<FetchOutcome> {
    const started = performance.now();
    try {
      const out = await this.fetchOnce(caller, p, signal, opts);
      this.metrics.fetches.inc({ outcome: 'ok', verdict: out.envelope.verdict });
      this.metrics.fetchSeconds.observe(
        { cached: String(out.envelope.cached) },
        (performance.now() - started) / 1000,
      );
      return out;
    } catch (err) {
      this.metrics.fetches.inc({
        outcome: err instanceof SiftError || err instanceof InternalFault ? err.code : 'internal',
        verdict: 'none',
      });
      throw err;
    }
  }

  private async fetchOnce(
    caller: Caller,
    p: FetchParams,
    signal: CallerSignal | undefined,
    opts: FetchCallOptions,
  ): Promise<FetchOutcome> {
    const format: Format = p.format ?? 'markdown';
    const headers = this.checkHeaders(caller, p.headers);
    const robots = checkRobotsOption(caller, p.robots);
    const url = parseHttpUrl(p.url);
    // A page fetched without asking robots.txt is kept apart from those fetched asking it.
    const extract: ExtractOptions = {
      ...(p.links ? { links: true } : {}),
      ...(p.include_selectors?.length ? { include: p.include_selectors } : {}),
      ...(p.exclude_selectors?.length ? { exclude: p.exclude_selectors } : {}),
    };
    const key = sha256Hex(
      JSON.stringify([
        caller.callerClass,
        url.href,
        format,
        headers,
        ...(robots ? [] : ['robots:false']),
        ...(Object.keys(extract).length > 0 ? [extract] : []),
      ]),
    );
    const maxAge = p.max_age_s ?? DEFAULT_MAX_AGE_S;
    const waiter: Waiter = {
      host: url.host,
      timeoutMs: p.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      get signal() {
        return typeof signal === 'function' ? signal() : signal;
      },
    };
    const page = await this.page(key, maxAge, waiter, (shared, stale) =>
      this.fetchAndExtract(key, url.href, format, extract, caller, headers, robots, shared, opts, stale),
    );
    const cap = Math.min(p.max_bytes ?? Infinity, this.config.limits[caller.callerClass].outputCap);
    const hit = page.cached && !page.revalidated;
    const answerKey = hit ? `${key} ${cap} ${p.url}` : '';
    if (hit) {
      const answer = this.answers.get(answerKey);
      if (
        answer?.digest === page.digest &&
        answer.fetchedAt === page.fetchedAt &&
        answer.meta === page.meta
      ) {
        return { envelope: answer.envelope, answer };
      }
    }
    const cut = truncateUtf8(page.content, cap);
    const envelope: FetchEnvelope = {
      url: withoutUserinfo(p.url),
      final_url: page.meta.final_url,
      status: page.meta.status,
      content_type: page.meta.content_type,
      title: page.meta.title,
      format,
      content: cut.text,
      bytes: cut.bytes,
      truncated: cut.truncated || page.meta.truncated,
      cached: page.cached,
      revalidated: page.revalidated ?? false,
      verdict: page.meta.verdict ?? 'ok',
      metadata: page.meta.metadata ?? NO_METADATA,
      ...(p.links ? { links: page.meta.links ?? [] } : {}),
      fetched_at: new Date(page.fetchedAt * 1000).toISOString(),
      digest: `sha256:${cut.truncated ? sha256Hex(cut.text) : page.digest}`,
    };
    if (!hit) return { envelope, retryAfterS: page.retryAfterS };
    return {
      envelope,
      answer: { key: answerKey, digest: page.digest, fetchedAt: page.fetchedAt, meta: page.meta, envelope },
    };
  }

  private checkHeaders(caller: Caller, headers: Record<string, string> | undefined): Record<string, string> {
    if (!headers || Object.keys(headers).length === 0) return {};
    if (caller.callerClass !== 'fleet') {
      throw forbidden(
        'restricted callers may not send custom request headers',
        'send the request without "headers"',
      );
    }
    const out: Record<string, string> = {};
    for (const name of Object.keys(headers).sort()) {
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-')) {
        throw new SiftError(
          400,
          'invalid_request',
          `header "${name}" is set by sift and may not be sent`,
          'remove it from "headers"',
        );
      }
      out[lower] = headers[name];
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
    return { meta: fresh, content: stale.body, digest, fetchedAt, cached: true, revalidated: true };
  }

  /**
   * The host's turn: 429 host_backoff while it is paused (for any caller, on any instance), and
   * with a Crawl-delay, the wait for the next slot it allows (slots are handed out in the database,
   * so requests from every job and instance are spaced).
   */
  private async enterHost(host: string, crawlDelayMs: number, signal: AbortSignal): Promise<void> {
    const nowMs = this.clock.nowMs();
    const paused = await this.hosts.pausedUntil(host);
    if (paused > nowMs) throw hostBackoff(host, paused - nowMs);
    if (crawlDelayMs <= 0) return;
    const at = await this.hosts.reserveSlot(host, crawlDelayMs, nowMs);
    if (at > nowMs) await sleep(at - nowMs, signal);
  }

  /** A 429 or 503 with a Retry-After of at most an hour pauses the host for everyone. */
  private async noteBackoff(host: string, status: number, retryAfterS: number | undefined): Promise<void> {
    if ((status !== 429 && status !== 503) || retryAfterS === undefined || retryAfterS <= 0) return;
    if (retryAfterS > MAX_BACKOFF_S) return;
    await this.hosts.pauseHost(host, this.clock.nowMs() + retryAfterS * 1000);
  }

  /** Fresh cache entry, or the in-flight fetch of the same key, or a new fetch (see SingleFlight). */
  private async page(
    key: string,
    maxAgeS: number,
    waiter: Waiter,
    load: (signal: AbortSignal, stale?: CachedPage) => Promise<Page>,
  ): Promise<Page> {
    const now = this.clock.now();
    // max_age_s 0: no copy is fresh enough, but one with validators may still be confirmed (304).
    const hit = await this.cache.lookup(key, maxAgeS > 0 ? now - maxAgeS : Number.POSITIVE_INFINITY);
    if (hit?.fresh) {
      return {
        meta: hit.page.meta as unknown as PageMeta,
        content: hit.page.body,
        digest: hit.page.digest,
        fetchedAt: hit.page.fetchedAt,
        cached: true,
      };
    }
    const stale = hit && (hit.page.meta.etag || hit.page.meta.last_modified) ? hit.page : undefined;
    return this.flights.run(key, waiter, (signal) => load(signal, stale));
  }

  private async fetchAndExtract(
    key: string,
    url: string,
    format: Format,
    extract: ExtractOptions,
    caller: Caller,
    headers: Record<string, string>,
    robots: boolean,
    signal: AbortSignal,
    opts: FetchCallOptions,
    stale?: CachedPage,
  ): Promise<Page> {
    const who = `${caller.callerClass}:${caller.name}`;
    const staleMeta = stale?.meta as PageMeta | undefined;
    if (staleMeta) {
      // A conditional request: a 304 confirms the copy held (the caller's own headers stand).
      headers = {
        ...(staleMeta.etag ? { 'if-none-match': staleMeta.etag } : {}),
        ...(staleMeta.last_modified ? { 'if-modified-since': staleMeta.last_modified } : {}),
        ...headers,
      };
    }
    const target = parseHttpUrl(url);
    const crawlDelayMs = robots ? await this.robots.check(target, caller.callerClass, who) : 0;
    const release = await this.slots.acquire(target.host, signal);
    let hop = 0;
    let raw: RawPage;
    try {
      await this.enterHost(target.host, crawlDelayMs, signal);
      raw = await this.fetcher.fetch(url, {
        callerClass: caller.callerClass,
        caller: who,
        timeoutMs: MAX_TIMEOUT_MS,
        headers,
        signal,
        // Every redirect is checked against its own site's robots.txt (the first hop was above).
        beforeHop: robots
          ? async (u) => {
              if (hop++ > 0) await this.robots.check(u, caller.callerClass, who);
            }
          : undefined,
      });
    } finally {
      release();
    }
    await this.noteBackoff(target.host, raw.status, raw.retryAfterS);
    if (raw.status === 304 && stale && staleMeta) return this.revalidated(key, stale, staleMeta, raw);
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
    let links: { url: string; text: string }[] | undefined;
    if (kind === 'html') {
      html = decodeBody(raw.body, raw.contentType, true);
      const x = await this.extractor.extract(html, raw.finalUrl, format, {
        wait: opts.waitForExtraction,
        extract,
      });
      title = x.title;
      content = x.content;
      metadata = x.metadata;
      links = x.links;
    } else if (kind) {
      content = decodeBody(raw.body, raw.contentType, false);
    }
    const stored = truncateUtf8(content, this.storeCap);
    const meta: PageMeta = {
      url,
      final_url: raw.finalUrl,
      status: raw.status,
      content_type: raw.contentType,
      title,
      format,
      truncated: stored.truncated,
      verdict: verdictOf({ status: raw.status, html, title, content, isHtml: kind === 'html' }),
      ...(raw.etag ? { etag: raw.etag } : {}),
      ...(raw.lastModified ? { last_modified: raw.lastModified } : {}),
      ...(metadata ? { metadata } : {}),
      ...(links ? { links } : {}),
    };
    const fetchedAt = this.clock.now();
    let digest: string | undefined;
    if (!TRANSIENT_STATUS.has(raw.status)) {
      // The page is already in hand: a cache that cannot store it (a full disk) must not lose it.
      digest = await this.cache
        .put(key, stored.text, meta as unknown as Record<string, unknown>, fetchedAt)
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
}

/** The longest Retry-After that pauses a host; a longer one is only reported. */
export const MAX_BACKOFF_S = 3600;

export const hostBackoff = (host: string, ms: number) => {
  const s = Math.max(1, Math.ceil(ms / 1000));
  return new SiftError(
    429,
    'host_backoff',
    `${host} asked to be left alone for ${s} more s (it answered 429 or 503 with Retry-After)`,
    'try again after Retry-After; batch targets of this host wait by themselves',
    { 'Retry-After': String(s) },
  );
};

/** robots: false is for fleet callers only (403 for a restricted one); true unless turned off. */
export function checkRobotsOption(caller: Caller, robots: boolean | undefined): boolean {
  if (robots === false && caller.callerClass !== 'fleet') {
    throw forbidden('restricted callers may not turn robots.txt off', 'remove "robots": false');
  }
  return robots !== false;
}

/** Waits ms, or rejects as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The URL as the caller gave it, less any user:password@ (which is never sent upstream either). */
export function withoutUserinfo(raw: string): string {
  if (!raw.includes('@')) return raw;
  try {
    const u = new URL(raw);
    if (!u.username && !u.password) return raw;
    u.username = u.password = '';
    return u.href;
  } catch {
    return raw;
  }
}
