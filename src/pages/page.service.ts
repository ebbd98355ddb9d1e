import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../common/metrics';
import { InternalFault, SiftError } from '../common/errors';
import { SizedLru } from '../common/sized-lru';
import { Clock } from '../common/clock';
import { ContentCache, type CachedPage } from '../dcache';
import { parseHttpUrl } from '../fetch/fetcher';
import { SingleFlight, type Waiter } from '../fetch/single-flight';
import type { ExtractOptions, Format } from '../extract/extract';
import { askedOf, envelopeOf, neededFormats, withChanges, writtenIn } from './answer';
import { ChangeTracker } from './changes';
import { FetchedPages } from './fetched-pages';
import {
  checkHeaders,
  checkPageScripts,
  checkRobotsOption,
  optionRulesOf,
  proxyOf,
  renderModeOf,
  type Caller,
  type OptionRules,
} from './caller-policy';
import type { FetchEnvelope } from './envelope';
import { PageLoader, type Page } from './page-loader';
import { pageMetaOf } from './page-types';
import { cookiesOf, withStored } from './cookies';
import { ProfileService } from '../profiles';
import type { BrowserState } from '../render/render-types';
import type { FetchParams } from './fetch-params';
import { pageKeyOf } from './page-key';

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_AGE_S = 3600;

export type { CallerSignal, FetchCallOptions, FetchOutcome, FetchParams, Written } from './fetch-params';
import {
  answerBytes,
  type Answer,
  type CallerSignal,
  type FetchCallOptions,
  type FetchOutcome,
  type Written,
} from './fetch-params';

/**
 * One URL to one envelope: the content cache in front (keyed by caller class, normalised URL and
 * the options that change the extraction), one upstream fetch per key at a time, extraction, the
 * formats asked for (each written from the one extraction, cached or not), and the output cap.
 */
@Injectable()
export class PageService {
  private readonly flights = new SingleFlight<Page>();
  /** Page scripts and egress proxies, as the operator allows them. */
  private readonly rules: OptionRules;
  /**
   * The answers of recent cache hits, by cache key, cap and URL as given: a page asked for again
   * is answered with the envelope built and the bytes written the first time (building and
   * escaping the envelope is most of the cost of a hit). An entry counts only while the cache
   * hands out the same page.
   */
  private readonly answers = new SizedLru<Answer>(16 * 1024 * 1024, answerBytes);
  constructor(
    private readonly config: AppConfig,
    private readonly cache: ContentCache,
    private readonly clock: Clock,
    private readonly loader: PageLoader,
    private readonly metrics: Metrics,
    private readonly profiles: ProfileService,
    private readonly changes: ChangeTracker,
    private readonly fetched: FetchedPages,
  ) {
    this.rules = optionRulesOf(config);
  }

  /**
   * The envelope as UTF-8 JSON, what POST /v1/fetch sends. A cache hit answered before is sent
   * as it was written then.
   */
  fetchJson(caller: Caller, p: FetchParams, signal?: CallerSignal): Promise<Buffer> {
    return this.fetchWritten(caller, p, signal, 'json', (envelope) => Buffer.from(JSON.stringify(envelope)));
  }

  /**
   * The envelope as `write` writes it. A cache hit answered before is answered with what `write`
   * gave then, kept under the writer's name `as` (a name stands for one way of writing).
   */
  async fetchWritten<W extends Written>(
    caller: Caller,
    p: FetchParams,
    signal: CallerSignal | undefined,
    as: string,
    write: (envelope: FetchEnvelope) => W,
  ): Promise<W> {
    const { envelope, answer } = await this.fetchDetailed(caller, p, signal);
    this.fetched.remember(caller, envelope);
    const kept = answer?.written.get(as);
    if (kept !== undefined) return kept as W;
    const out = write(envelope);
    if (answer) this.answers.set(answer.key, { ...answer, written: new Map(answer.written).set(as, out) });
    return out;
  }

  /** The page findable by the caller's searches (a page fetched outside a job: see FetchedPages). */
  remember(caller: Caller, envelope: FetchEnvelope): void {
    this.fetched.remember(caller, envelope);
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
    const asked = askedOf(p);
    const formats = neededFormats(asked);
    const headers = checkHeaders(caller, p.headers);
    const robots = checkRobotsOption(caller, p.robots);
    checkPageScripts(caller, p, this.rules.pageScripts);
    const proxy = proxyOf(caller, p.proxy, this.rules);
    const url = parseHttpUrl(p.url);
    const profile = p.profile && (await this.profiles.load(caller, p.profile.name, p.profile.save));
    const cookies = withStored(cookiesOf(url, p.cookies), profile);
    const extract: ExtractOptions = {
      ...(p.include_selectors?.length ? { include: p.include_selectors } : {}),
      ...(p.exclude_selectors?.length ? { exclude: p.exclude_selectors } : {}),
    };
    const keyed = {
      callerClass: caller.callerClass,
      url,
      headers,
      robots,
      extract,
      cookies,
      proxy: proxy?.name,
      profile: profile?.version,
      p,
      raw: asked.raw,
    };
    // A save is the caller's own render, never another's answer: a key of its own, every time.
    const key = pageKeyOf(
      p.profile?.save ? { ...keyed, profile: `${profile!.version} save ${randomUUID()}` } : keyed,
    );
    // Saving a profile takes the browser's state as the page leaves it: never from the cache.
    const maxAge = p.profile?.save ? 0 : (p.max_age_s ?? DEFAULT_MAX_AGE_S);
    const timeoutMs = p.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    const render = {
      mode: renderModeOf(p),
      waitFor: p.wait_for,
      waitMs: p.wait_ms,
      screenshot: p.screenshot,
      fullPage: p.full_page,
      actions: p.actions,
      profile: profile && {
        state: profile.state,
        save: p.profile?.save ? this.saver(caller, profile.name) : undefined,
      },
      deadline: Date.now() + timeoutMs,
    };
    const waiter: Waiter = {
      host: url.host,
      timeoutMs,
      get signal() {
        return typeof signal === 'function' ? signal() : signal;
      },
    };
    let page = await this.page(key, maxAge, waiter, (shared, stale) =>
      this.loader.load({
        key,
        url,
        formats,
        extract,
        raw: asked.raw,
        cookies,
        proxy,
        caller,
        headers,
        robots,
        signal: shared,
        waitForExtraction: opts.waitForExtraction,
        stale,
        render,
        document: { pages: p.pages, deadline: render.deadline, ocr: p.ocr },
      }),
    );
    // An html page cached (or fetched by another caller) in other formats: written in these from
    // its cached article, without fetching it again.
    const missing =
      page.meta.kind === 'html'
        ? formats.filter((f): f is Exclude<Format, 'html'> => f !== 'html' && !page.meta.formats?.[f])
        : [];
    if (missing.length > 0)
      page = await this.loader.writeFormats(key, page, missing, { caller, wait: opts.waitForExtraction });
    const cap = Math.min(p.max_bytes ?? Infinity, this.config.limits[caller.callerClass].outputCap);
    if (asked.changes) {
      // Each fetch asking for changes is compared and recorded: never an answer kept from before.
      const markdown = writtenIn(page, 'markdown')?.text ?? '';
      const changes = await this.changes.track(
        caller,
        pageKeyOf(keyed),
        page.meta.status,
        markdown,
        opts.target,
      );
      const envelope = withChanges(envelopeOf(p.url, asked, page, cap), changes, cap);
      return { envelope, retryAfterS: page.retryAfterS, pageLinks: page.meta.links };
    }
    const hit = page.cached && !page.revalidated && missing.length === 0;
    const answerKey = hit ? `${key} ${JSON.stringify(asked)} ${cap} ${p.url}` : '';
    if (hit) {
      const answer = this.answers.get(answerKey);
      if (
        answer?.digest === page.digest &&
        answer.fetchedAt === page.fetchedAt &&
        answer.meta === page.meta
      ) {
        return { envelope: answer.envelope, answer, pageLinks: page.meta.links };
      }
    }
    const envelope = envelopeOf(p.url, asked, page, cap);
    const pageLinks = page.meta.links;
    if (!hit) return { envelope, retryAfterS: page.retryAfterS, pageLinks };
    const answer: Answer = {
      key: answerKey,
      digest: page.digest,
      fetchedAt: page.fetchedAt,
      meta: page.meta,
      envelope,
      written: new Map(),
    };
    this.answers.set(answerKey, answer);
    return { envelope, pageLinks, answer };
  }

  private saver(caller: Caller, name: string) {
    return (state: BrowserState) => this.profiles.save(caller, name, state);
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
        meta: pageMetaOf(hit.page.meta),
        source: hit.page.body,
        digest: hit.page.digest,
        fetchedAt: hit.page.fetchedAt,
        cached: true,
      };
    }
    const stale = hit && (hit.page.meta.etag || hit.page.meta.last_modified) ? hit.page : undefined;
    return this.flights.run(key, waiter, (signal) => load(signal, stale));
  }
}
