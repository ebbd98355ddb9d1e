import { Clock } from '../common/clock';
import { SiftError } from '../common/errors';
import { hostOf } from '../common/urls';
import type { CallerClass } from '../config/app-config';
import type { HostStore } from '../dcache';
import type { Fetcher, RawPage } from './fetcher';
import { HostSlots } from './host-slots';
import type { Robots } from './robots';
import type { EgressProxy } from './egress';

/** The longest a caller may ask for; a shared upstream fetch runs at most this long. */
export const MAX_TIMEOUT_MS = 120_000;
/** The longest Retry-After that pauses a host; a longer one is only reported. */
export const MAX_BACKOFF_S = 3600;

export interface UpstreamRequest {
  url: URL;
  callerClass: CallerClass;
  /** `class:name`, for logs and the per-caller DNS limit. */
  who: string;
  headers: Record<string, string>;
  /** The Cookie header for a hop's URL (the caller's cookies, by their scope). */
  cookies?: (url: URL) => string | undefined;
  /** The egress proxy for the page and its robots.txt. */
  proxy?: EgressProxy;
  /** false: robots.txt is not asked (the caller may turn it off). */
  robots: boolean;
  signal: AbortSignal;
}

/**
 * One request upstream as a good citizen. Each hop's address is checked for the caller first
 * (Fetcher); only then is anything sift knows of the host consulted or changed: its robots.txt
 * (every hop), its pause (every hop: 429 host_backoff), and for the first hop one of the host's
 * SIFT_PER_HOST_CONCURRENCY slots in this process and its Crawl-delay turn (taken in the database
 * for every instance, when the request is about to go). A 429 or 503 with Retry-After pauses the
 * host that answered, for everyone.
 */
export class Upstream {
  /** Upstream fetches per host in this process: the limit for all work together. */
  private readonly slots: HostSlots;

  private readonly fetcher: Fetcher;
  private readonly robots: Robots;
  private readonly hosts: HostStore;
  private readonly clock: Clock;

  constructor(parts: {
    fetcher: Fetcher;
    robots: Robots;
    hosts: HostStore;
    clock: Clock;
    perHostConcurrency: number;
  }) {
    ({ fetcher: this.fetcher, robots: this.robots, hosts: this.hosts, clock: this.clock } = parts);
    this.slots = new HostSlots(parts.perHostConcurrency);
  }

  async get(req: UpstreamRequest): Promise<RawPage> {
    const { url, callerClass, who, signal } = req;
    let release: (() => void) | undefined;
    let raw: RawPage;
    try {
      raw = await this.fetcher.fetch(url.href, {
        callerClass,
        caller: who,
        timeoutMs: MAX_TIMEOUT_MS,
        headers: req.headers,
        cookies: req.cookies,
        proxy: req.proxy,
        signal,
        beforeHop: async (u, hop, fetchSignal) => {
          const crawlDelayMs = req.robots ? await this.robots.check(u, callerClass, who, req.proxy) : 0;
          await this.checkPause(u.host);
          if (hop > 0) return;
          release = await this.slots.acquire(u.host, fetchSignal);
          if (crawlDelayMs > 0) await this.takeTurn(u.host, crawlDelayMs, fetchSignal);
        },
      });
    } finally {
      release?.();
    }
    // The host that answered asked for the pause: after a redirect, not the one the fetch began at.
    await this.noteBackoff(hostOf(raw.finalUrl) || url.host, raw.status, raw.retryAfterS);
    return raw;
  }

  /** 429 host_backoff while the host is paused (for any caller, on any instance). */
  private async checkPause(host: string): Promise<void> {
    const nowMs = this.clock.nowMs();
    const paused = await this.hosts.pausedUntil(host);
    if (paused > nowMs) throw hostBackoff(host, paused - nowMs);
  }

  /**
   * The host's Crawl-delay turn, taken only when it is due (one statement: two requests never
   * take the same turn); until then, waits for the turn someone else took to pass. A request that
   * gives up while waiting has taken nothing.
   */
  private async takeTurn(host: string, crawlDelayMs: number, signal: AbortSignal): Promise<void> {
    for (;;) {
      const nowMs = this.clock.nowMs();
      const nextAt = await this.hosts.takeTurn(host, crawlDelayMs, nowMs);
      if (nextAt === undefined) return;
      await sleep(Math.max(1, nextAt - nowMs), signal);
    }
  }

  /** A 429 or 503 with a Retry-After of at most an hour pauses the host for everyone. */
  private async noteBackoff(host: string, status: number, retryAfterS: number | undefined): Promise<void> {
    if ((status !== 429 && status !== 503) || retryAfterS === undefined || retryAfterS <= 0) return;
    if (retryAfterS > MAX_BACKOFF_S) return;
    await this.hosts.pauseHost(host, this.clock.nowMs() + retryAfterS * 1000);
  }
}

export const hostBackoff = (host: string, ms: number) => {
  const s = Math.max(1, Math.ceil(ms / 1000));
  return new SiftError(
    429,
    'host_backoff',
    `${host} asked to be left alone for ${s} more s (it answered 429 or 503 with Retry-After)`,
    'try again after Retry-After; batch targets of this host wait by themselves',
  ).retryAfter(s);
};

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
