import type { Logger } from '@nestjs/common';
import { INTERNAL_HINTS, InternalFault, SiftError, isStorageUnavailable } from '../common/errors';
import type { TargetOutcome } from '../batch/job-lifecycle';
import { pageDocOf } from '../dcache';
import { withoutUserinfo } from '../common/urls';
import { MAX_BACKOFF_S } from '../fetch/upstream';
import type { FetchedPage } from '../crawl';
import type { Caller } from '../pages/caller-policy';
import type { FetchOutcome, FetchParams, PageService } from '../pages/page.service';

const MAX_RETRIES = 2;
const RETRY_STATUS = new Set([429, 502, 503]);
/**
 * Times a target goes back to wait for its paused host before the host's answer (429/503) is
 * kept as its result: a host that never lets up does not hold a job live for ever.
 */
export const MAX_DEFERRALS = 20;

export interface PendingTarget {
  idx: number;
  url: string;
  options: string;
  /** Times it already went back to wait for its host. */
  deferrals?: number;
  /** A crawl's target: link hops from the seed. */
  depth?: number | null;
}

/**
 * How a try ended: as the lifecycle records it (a crawl's page with what it holds), or deferred
 * (back to pending until the host's pause ends).
 */
export type AttemptOutcome = (TargetOutcome & { page?: FetchedPage }) | { kind: 'deferred' };

/**
 * Fetches one target with at most two retries for resets and 429/502/503 without Retry-After. A
 * host that asks to wait (429/503 with Retry-After, up to an hour) is paused for every job, caller
 * and instance by the PageService: the target is deferred, not failed, and claimed again once
 * the pause ends. Undefined when the signal aborted it: nothing is to be written.
 */
export async function attempt(a: {
  pages: PageService;
  /** The target's job: its caller, and a crawl's (whose page is recorded with its links). */
  job: { id: string; caller: Caller; crawl?: unknown };
  target: PendingTarget;
  signal: AbortSignal;
  log: Logger;
}): Promise<AttemptOutcome | undefined> {
  const { pages: fetcher, target: t, signal, log } = a;
  const caller = a.job.caller;
  const mayDefer = (t.deferrals ?? 0) < MAX_DEFERRALS;
  const params: FetchParams = {
    ...(JSON.parse(t.options) as Omit<FetchParams, 'url'>),
    url: t.url,
  };
  for (let n = 0; ; n++) {
    let out: FetchOutcome;
    try {
      out = await fetcher.fetchDetailed(caller, params, signal, {
        waitForExtraction: true,
        target: `${a.job.id}:${t.idx}`,
      });
    } catch (err) {
      if (signal.aborted) return undefined;
      // The page cache, robots.txt or host state could not be read or written: the database is
      // away, not the page. The target waits for it and is fetched again, never failed for it.
      if (isStorageUnavailable(err)) {
        if (!(await pause(DB_WAIT_MS, signal))) return undefined;
        n--;
        continue;
      }
      if (!(err instanceof SiftError)) return fault(t, err, log);
      if (err.code === 'host_backoff' && mayDefer) return { kind: 'deferred' };
      if (err.code === 'connect_error' && n < MAX_RETRIES && (await backoff(n, signal))) continue;
      if (signal.aborted) return undefined;
      return { kind: 'failed', code: err.code, message: err.message, hint: err.hint };
    }
    const status = out.envelope.status;
    const waitAsked = out.retryAfterS !== undefined && out.retryAfterS > 0;
    if ((status === 429 || status === 503) && waitAsked && out.retryAfterS! <= MAX_BACKOFF_S && mayDefer) {
      return { kind: 'deferred' };
    }
    if (RETRY_STATUS.has(status) && !waitAsked && n < MAX_RETRIES) {
      if (await backoff(n, signal)) continue;
      if (signal.aborted) return undefined;
    }
    const e = out.envelope;
    const page =
      a.job.crawl !== undefined
        ? {
            page: {
              finalUrl: e.final_url,
              digest: e.verdict === 'empty' ? '' : e.digest,
              links: (out.pageLinks ?? []).map((l) => l.url),
            },
          }
        : {};
    return { kind: 'done', result: JSON.stringify(e), verdict: e.verdict, doc: pageDocOf(e), ...page };
  }
}

/**
 * A fault of sift's own (a bug, or a crashed extraction) is not the upstream's: it is logged with
 * its details, stored under its own code, and never retried.
 */
function fault(t: PendingTarget, err: unknown, log: Logger): TargetOutcome {
  const code = err instanceof InternalFault ? err.code : 'internal';
  log.error(
    `target ${t.idx} (${withoutUserinfo(t.url)}) ${code}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  const [message, hint] = INTERNAL_HINTS[code];
  return { kind: 'failed', code, message, hint };
}

/** How long a target waits for the database before it is fetched again. */
const DB_WAIT_MS = 1000;

/** Waits before a retry; false when the wait was cut short by an abort. */
function backoff(n: number, signal: AbortSignal): Promise<boolean> {
  return pause(250 * 2 ** n, signal);
}

function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
