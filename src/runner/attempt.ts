import type { Logger } from '@nestjs/common';
import { INTERNAL_HINTS, InternalFault, SiftError } from '../common/errors';
import type { TargetOutcome } from '../batch/job-lifecycle';
import type { Caller, FetchOutcome, FetchParams, FetchService } from '../fetch/fetch.service';

const MAX_RETRIES = 2;
const MAX_RETRY_AFTER_S = 30;
const RETRY_STATUS = new Set([429, 502, 503]);

export interface PendingTarget {
  idx: number;
  url: string;
  options: string;
}

/**
 * Fetches one target with at most two retries for resets and 429/502/503 (honouring a
 * Retry-After of up to 30 s). Undefined when the signal aborted it: nothing is to be written.
 */
export async function attempt(
  fetcher: FetchService,
  caller: Caller,
  t: PendingTarget,
  signal: AbortSignal,
  log: Logger,
): Promise<TargetOutcome | undefined> {
  const params = { ...(JSON.parse(t.options) as Omit<FetchParams, 'url'>), url: t.url };
  for (let n = 0; ; n++) {
    let out: FetchOutcome;
    try {
      out = await fetcher.fetchDetailed(caller, params, signal, { waitForExtraction: true });
    } catch (err) {
      if (signal.aborted) return undefined;
      if (!(err instanceof SiftError)) return fault(t, err, log);
      if (err.code === 'connect_error' && n < MAX_RETRIES && (await backoff(n, undefined, signal))) continue;
      if (signal.aborted) return undefined;
      return { kind: 'failed', code: err.code, message: err.message, hint: err.hint };
    }
    const status = out.envelope.status;
    if (RETRY_STATUS.has(status) && n < MAX_RETRIES) {
      if (out.retryAfterS === undefined || out.retryAfterS <= MAX_RETRY_AFTER_S) {
        if (await backoff(n, out.retryAfterS, signal)) continue;
        if (signal.aborted) return undefined;
      }
    }
    return { kind: 'done', result: JSON.stringify(out.envelope) };
  }
}

/**
 * A fault of sift's own (a bug, or a crashed extraction) is not the upstream's: it is logged with
 * its details, stored under its own code, and never retried.
 */
function fault(t: PendingTarget, err: unknown, log: Logger): TargetOutcome {
  const code = err instanceof InternalFault ? err.code : 'internal';
  log.error(
    `target ${t.idx} (${t.url}) ${code}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  const [message, hint] = INTERNAL_HINTS[code];
  return { kind: 'failed', code, message, hint };
}

/** Waits before a retry; false when the wait was cut short by an abort. */
function backoff(n: number, retryAfterS: number | undefined, signal: AbortSignal): Promise<boolean> {
  const ms = retryAfterS !== undefined ? retryAfterS * 1000 : 250 * 2 ** n;
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
