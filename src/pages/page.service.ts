import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../common/metrics';
import { InternalFault, SiftError } from '../common/errors';
import { SizedLru } from '../common/sized-lru';
import { truncateUtf8 } from '../common/truncate';
import { Clock } from '../common/clock';
import { ContentCache, sha256Hex, type CachedPage } from '../dcache';
import { parseHttpUrl } from '../fetch/fetcher';
import { SingleFlight, type Waiter } from '../fetch/single-flight';
import type { ExtractOptions, Format } from '../extract/extract';
import { NO_METADATA } from '../extract/metadata';
import { withoutUserinfo } from '../common/urls';
import { checkHeaders, checkRobotsOption, type Caller } from './caller-policy';
import type { FetchEnvelope } from './envelope';
import { linkBytes, linksWithin } from './links-budget';
import { PageLoader, type Page, type PageMeta } from './page-loader';

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_AGE_S = 3600;

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

export interface FetchOutcome {
  envelope: FetchEnvelope;
  /** Seconds the upstream asked to wait before trying again (429/503), when it said. */
  retryAfterS?: number;
  /** A cache hit's answer, kept with its JSON once written (see PageService.answers). */
  answer?: Answer;
}

/**
 * A cache hit's answer: everything in it follows from the cached page (named by its digest, its
 * fetch time and its stored fields), the URL as the caller wrote it and the output cap; the cache
 * key holds the rest (caller class, format, headers, robots, extraction options).
 */
interface Answer {
  /** Its place in PageService.answers. */
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

/**
 * One URL to one envelope: the content cache in front (keyed by caller class, normalised URL and
 * the options that change the output), one upstream fetch per key at a time, extraction, and the
 * output cap.
 */
@Injectable()
export class PageService {
  private readonly flights = new SingleFlight<Page>();
  /**
   * The answers of recent cache hits, by cache key, cap and URL as given: a page asked for again
   * is answered with the bytes written the first time (building and escaping the envelope is most
   * of the cost of a hit). An entry counts only while the cache hands out the same page.
   */
  private readonly answers = new SizedLru<Answer>(
    16 * 1024 * 1024,
    (a) =>
      (a.json?.length ?? 0) +
      a.envelope.content.length * 2 +
      (a.envelope.links ?? []).reduce((n, l) => n + linkBytes(l) * 2, 0),
  );
  constructor(
    private readonly config: AppConfig,
    private readonly cache: ContentCache,
    private readonly clock: Clock,
    private readonly loader: PageLoader,
    private readonly metrics: Metrics,
  ) {}

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
    const headers = checkHeaders(caller, p.headers);
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
      this.loader.load({
        key,
        url,
        format,
        extract,
        caller,
        headers,
        robots,
        signal: shared,
        waitForExtraction: opts.waitForExtraction,
        stale,
      }),
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
    // The links share the cap with the content: they fill what it leaves.
    const links = p.links ? linksWithin(page.meta.links ?? [], cap - cut.bytes) : undefined;
    const envelope: FetchEnvelope = {
      url: withoutUserinfo(p.url),
      final_url: page.meta.final_url,
      status: page.meta.status,
      content_type: page.meta.content_type,
      title: page.meta.title,
      format,
      content: cut.text,
      bytes: cut.bytes,
      truncated: cut.truncated || page.meta.truncated || (links?.cut ?? false),
      cached: page.cached,
      revalidated: page.revalidated ?? false,
      verdict: page.meta.verdict ?? 'ok',
      metadata: page.meta.metadata ?? NO_METADATA,
      ...(links ? { links: links.links } : {}),
      fetched_at: new Date(page.fetchedAt * 1000).toISOString(),
      digest: `sha256:${cut.truncated ? sha256Hex(cut.text) : page.digest}`,
    };
    if (!hit) return { envelope, retryAfterS: page.retryAfterS };
    return {
      envelope,
      answer: { key: answerKey, digest: page.digest, fetchedAt: page.fetchedAt, meta: page.meta, envelope },
    };
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
}
