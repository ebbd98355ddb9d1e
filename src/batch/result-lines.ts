import { targetFilterTakes, type BatchReader, type BatchTarget, type TargetFilter } from '../dcache';
import { isEndedTarget, isTerminalJob } from '../common/job-status';
import { TimeSlicer } from '../common/time-slice';
import type { JobSignals } from './job-signals';
import { resultJson } from './views';

/** A followed results stream looks again at least this often (an event of another instance). */
const FOLLOW_POLL_MS = 2000;

/**
 * The stored text one read of results takes, about (a larger single result alone). On SQLite a
 * read holds the event loop while it runs: a hundred results of 2 MiB read at once held it for a
 * second; a mebibyte takes a millisecond or two.
 */
export const READ_BYTES = 1024 * 1024;

/** How many of the targets whose sizes are `sizes` (in idx order) one read takes. */
function fitting(sizes: readonly { bytes: number }[], from: number): number {
  let n = 0;
  let total = 0;
  while (from + n < sizes.length && (n === 0 || total + sizes[from + n].bytes <= READ_BYTES)) {
    total += sizes[from + n].bytes;
    n++;
  }
  return n;
}

/**
 * The results of the targets `sizes` names (those after `after` the filter takes, in idx order,
 * as batchResultSizes read them), as TargetResult JSON, read about READ_BYTES at a time with turns
 * of the event loop between slices: one group per read. `last`: the idx of the last one read.
 */
export async function readResults(
  reader: BatchReader,
  id: string,
  from: { after: number; filter: TargetFilter },
  sizes: readonly { bytes: number }[],
): Promise<{ groups: string[][]; last: number | undefined }> {
  const slicer = new TimeSlicer();
  const groups: string[][] = [];
  let after = from.after;
  let last: number | undefined;
  for (let i = 0; i < sizes.length;) {
    const rows = await reader.targets.batchTargetsPage(id, after, fitting(sizes, i), from.filter);
    if (rows.length === 0) break;
    groups.push(rows.map(resultJson));
    after = last = rows[rows.length - 1].idx;
    i += rows.length;
    if (slicer.due()) await slicer.turn();
  }
  return { groups, last };
}

/**
 * The next targets after `after` the filter takes: at most `look` (their sizes are read first)
 * and about READ_BYTES of stored text (at least one). `more`: whether any may follow; `look`:
 * what to read the sizes of next time, twice as many as fitted (results of 2 MiB: one at a time,
 * so a hundred sizes are not read again for each).
 */
async function pageOf(
  reader: BatchReader,
  id: string,
  at: { after: number; look: number; limit: number },
  filter: TargetFilter = {},
): Promise<{ page: BatchTarget[]; more: boolean; look: number }> {
  const sizes = await reader.targets.batchResultSizes(id, at.after, at.look, filter);
  const n = fitting(sizes, 0);
  const page = n > 0 ? await reader.targets.batchTargetsPage(id, at.after, n, filter) : [];
  return {
    page,
    more: page.length > 0 && (n < sizes.length || sizes.length === at.look),
    look: Math.min(at.limit, 2 * Math.max(1, page.length)),
  };
}

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
  const slicer = new TimeSlicer();
  let look = pageSize;
  for (;;) {
    const read = await pageOf(from.reader, id, { after, look, limit: pageSize }, filter);
    const { page, more } = read;
    look = read.look;
    for (const t of page) {
      yield `${resultJson(t)}\n`;
      // A reader that takes every line at once never makes the stream wait for its socket.
      if (slicer.due()) await slicer.turn();
    }
    if (!more || opts.stop?.aborted) return;
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
  let look = pageSize;
  const slicer = new TimeSlicer();
  while (!stop?.aborted) {
    // Listening before the reads: an event committed between a read and the wait still wakes it.
    const woken = new AbortController();
    const signal = stop ? AbortSignal.any([woken.signal, stop]) : woken.signal;
    const next = from.signals.nextEvent(id, FOLLOW_POLL_MS, signal);
    try {
      // The job first: one that has ended by then has every target ended in the page read after,
      // but a cancelled one.
      const job = await from.reader.jobs.batchJob(id);
      if (!job) return undefined;
      const read = await pageOf(from.reader, id, { after, look, limit: pageSize });
      const { page, more } = read;
      look = read.look;
      let waiting = false;
      for (const t of page) {
        if (!isEndedTarget(t.status)) {
          waiting = true;
          break;
        }
        after = t.idx;
        if (targetFilterTakes(filter, t)) yield `${resultJson(t)}\n`;
        if (slicer.due()) await slicer.turn();
      }
      if (!waiting && !more) return after;
      // A cancelled job's targets end just after it (see endCancelledTargets): waited for.
      if (waiting && isTerminalJob(job.status) && job.status !== 'cancelled') return after;
      if (waiting) await next;
    } finally {
      woken.abort();
    }
  }
  return undefined;
}
