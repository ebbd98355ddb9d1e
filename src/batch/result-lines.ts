import { targetFilterTakes, type BatchReader, type TargetFilter } from '../dcache';
import { isEndedTarget, isTerminalJob } from '../common/job-status';
import type { JobSignals } from './job-signals';
import { resultJson } from './views';

/** A followed results stream looks again at least this often (an event of another instance). */
const FOLLOW_POLL_MS = 2000;

interface Sources {
  reader: BatchReader;
  signals: JobSignals;
}

/**
 * A job's results in idx order as NDJSON lines, a page at a time (constant memory). Without
 * `follow`, as they stand: a live job's pending and running targets are written with status
 * pending or running and result null. With `follow`, each target once it has ended (followLines),
 * and the stream ends when the job has. `stop`: the reader has left.
 */
export async function* resultLines(
  from: Sources,
  id: string,
  filter: TargetFilter,
  opts: { follow?: boolean; stop?: AbortSignal; pageSize?: number } = {},
): AsyncGenerator<string> {
  const { pageSize = 100 } = opts;
  let after: number | undefined = -1;
  if (opts.follow) {
    after = yield* followLines(from, id, filter, pageSize, opts.stop);
    if (after === undefined) return;
  }
  for (;;) {
    const page = await from.reader.targets.batchTargetsPage(id, after, pageSize, filter);
    for (const t of page) yield `${resultJson(t)}\n`;
    if (page.length < pageSize || opts.stop?.aborted) return;
    after = page[page.length - 1].idx;
  }
}

/**
 * Each target once it has ended (done, failed or cancelled), in idx order, waiting at the first
 * that has not for the job's next event, or FOLLOW_POLL_MS (an event of another instance whose
 * NOTIFY was missed). Filters apply to the ended target. Returns the idx it got to once the job
 * has ended, for the rest to be written as they stand (every target has ended then, but in a job
 * ended through the seed's store); undefined when it stopped (the reader left, the job is gone).
 */
async function* followLines(
  from: Sources,
  id: string,
  filter: TargetFilter,
  pageSize: number,
  stop?: AbortSignal,
): AsyncGenerator<string, number | undefined> {
  let after = -1;
  while (!stop?.aborted) {
    // Listening before the reads: an event committed between a read and the wait still wakes it.
    const woken = new AbortController();
    const signal = stop ? AbortSignal.any([woken.signal, stop]) : woken.signal;
    const next = from.signals.nextEvent(id, FOLLOW_POLL_MS, signal);
    try {
      // The job first: one that has ended by then has every target ended in the page read after.
      const job = await from.reader.jobs.batchJob(id);
      if (!job) return undefined;
      const page = await from.reader.targets.batchTargetsPage(id, after, pageSize);
      let waiting = false;
      for (const t of page) {
        if (!isEndedTarget(t.status)) {
          waiting = true;
          break;
        }
        after = t.idx;
        if (targetFilterTakes(filter, t)) yield `${resultJson(t)}\n`;
      }
      if (!waiting && page.length < pageSize) return after;
      if (waiting && isTerminalJob(job.status)) return after;
      if (waiting) await next;
    } finally {
      woken.abort();
    }
  }
  return undefined;
}
