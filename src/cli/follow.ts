// Following a job: its progress from the event stream until it ends, then its results (see
// results-out.ts). What Ctrl-C or a server that stops leaves behind is told by job-notes.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import { api, call, EXIT, fail, getJson, jobPath, Unreachable, type Api, type Reply } from './client';
import { ended, interrupted, ServerStopping, stopped, type JobView } from './job-notes';
import { Progress } from './progress';
import { writeResults, type ResultsOut } from './results-out';

const ENDED = new Set(['done', 'partial', 'failed', 'cancelled']);
/** How long results are still fetched after Ctrl-C (a second Ctrl-C stops at once). */
const AFTER_INTERRUPT_MS = 10_000;
/** Times an event stream that ends before its job may be opened again. */
const REOPENS = 5;

export const isEnded = (status: string) => ENDED.has(status);

/** Ctrl-C: the first aborts `signal` so the command can write what came; the second exits at once. */
export class Interrupt {
  private readonly ctl = new AbortController();
  readonly signal = this.ctl.signal;

  constructor() {
    process.on('SIGINT', () => {
      if (this.signal.aborted) process.exit(EXIT.interrupted);
      this.ctl.abort();
    });
  }
}

/** A target's end in the event stream: a batch's target.done/failed, or a crawl's crawl.page. */
interface TargetEnd {
  idx?: number;
  status?: string;
  /** A crawl's page: the links it added to the job. */
  added?: number;
}

function parsed<T>(data: string | undefined): Partial<T> {
  try {
    return (JSON.parse(data ?? '{}') ?? {}) as Partial<T>;
  } catch {
    return {}; // a malformed event carries nothing to count
  }
}

/**
 * The job's progress as its events tell it. A crawl's total grows by each page's `added` (its seed
 * is its one first target); events replayed from the start never count twice.
 */
class Tally {
  private readonly finished = new Set<number>();
  private failed = 0;
  private added = 0;
  private total: number;
  lastSeq = 0;

  constructor(
    job: JobView,
    private readonly bar: Progress,
  ) {
    this.total = job.targets_total;
  }

  /** Takes one SSE message; the job's final status when it is the terminal event. */
  take(block: string): string | undefined {
    const type = /^event: (.+)$/m.exec(block)?.[1];
    const data = /^data: (.+)$/m.exec(block)?.[1];
    this.lastSeq = Number(/^id: (\d+)$/m.exec(block)?.[1] ?? this.lastSeq);
    if (type === 'stopping') {
      const after = parsed<{ retry_after_s: number }>(data).retry_after_s;
      throw new ServerStopping(typeof after === 'number' ? after : undefined);
    }
    if (type === 'target.done' || type === 'target.failed' || type === 'crawl.page') {
      const event = parsed<{ at: string; data: TargetEnd }>(data);
      const end = event.data ?? {};
      const idx = end.idx ?? -this.lastSeq;
      if (this.finished.has(idx)) return undefined;
      this.finished.add(idx);
      if (type === 'target.failed' || end.status === 'failed') this.failed++;
      if (type === 'crawl.page') {
        this.added += end.added ?? 0;
        this.total = Math.max(this.total, 1 + this.added);
      }
      const at = Date.parse(event.at ?? '');
      this.bar.show(this.finished.size, this.total, this.failed, Number.isNaN(at) ? Date.now() : at);
    } else if (type && /^batch\.(done|partial|failed|cancelled)$/.test(type)) {
      return type.slice('batch.'.length);
    }
    return undefined;
  }
}

/**
 * Reads one opened event stream to its end: the terminal status if it came. A stream that ends or
 * is cut off before it gives undefined (the job's state then says what next); the server's
 * `stopping` message throws ServerStopping.
 */
async function readStream(res: Reply, tally: Tally): Promise<string | undefined> {
  let status: string | undefined;
  let buf = '';
  try {
    for await (const chunk of res.body) {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        status = tally.take(buf.slice(0, i)) ?? status;
        buf = buf.slice(i + 2);
      }
    }
  } catch (err) {
    if (err instanceof ServerStopping) throw err;
    // Interrupted, or the stream was cut off: the caller looks at the signal, then at the job.
  }
  return status;
}

/**
 * Shows the job's progress from its event stream until its terminal event, opening the stream
 * again (from the last event) if it ends early while the job is live. The job's final status, or
 * undefined when interrupted. A server that says it stops throws ServerStopping; one that cannot
 * be reached (the stream cut, then the job's view refused) throws Unreachable.
 */
export async function followEvents(
  a: Api,
  job: JobView,
  signal: AbortSignal,
  bar: Progress,
): Promise<string | undefined> {
  const tally = new Tally(job, bar);
  for (let opened = 0; ; opened++) {
    let res: Reply;
    try {
      res = await call(a, 'GET', `${jobPath(job.id)}/events`, {
        accept: 'text/event-stream',
        headers: tally.lastSeq > 0 ? { 'last-event-id': String(tally.lastSeq) } : {},
        signal,
      });
    } catch (err) {
      if (signal.aborted) return undefined;
      throw err;
    }
    const status = await readStream(res, tally);
    if (signal.aborted) return undefined;
    if (status) return status;
    const view = await getJson<JobView>(a, jobPath(job.id), signal).catch((err: unknown) => {
      if (signal.aborted) return undefined;
      throw err;
    });
    if (!view) return undefined;
    if (ENDED.has(view.status)) return view.status;
    if (opened >= REOPENS)
      fail(`the event stream of job ${job.id} keeps ending; follow it with: sift watch ${job.id}`);
    await sleep(1000, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return undefined;
  }
}

/**
 * Writes an ended job's results; Ctrl-C, or a server that stops part way, says how to take it up
 * (the lines written stay).
 */
export async function writeEnded(a: Api, view: JobView, out: ResultsOut, signal: AbortSignal): Promise<void> {
  try {
    if (!(await writeResults(a, view.id, out, {}, signal)).complete) interrupted(view, out, false);
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err;
    stopped(view, out, err, false);
  }
}

/**
 * Follows a job to its end, then (with `out`) writes its results. Ctrl-C while the job runs writes
 * the results finished so far; a server that stops or goes away ends the command with what it
 * wrote kept; either way the command says how to take it up again. `stop` is made before the line
 * that says the job is followed is printed: a Ctrl-C that comes after that line must find it there.
 */
export async function followJob(
  job: JobView,
  out: ResultsOut | undefined,
  stop: Interrupt,
  a: Api = api(),
): Promise<void> {
  const bar = new Progress();
  try {
    const status = await followEvents(a, job, stop.signal, bar);
    bar.end();
    if (status === undefined) {
      if (out) {
        await writeResults(
          a,
          job.id,
          out,
          { finishedOnly: true },
          AbortSignal.timeout(AFTER_INTERRUPT_MS),
        ).catch((err: unknown) =>
          console.error(`sift: could not fetch the results so far: ${(err as Error).message}`),
        );
      }
      return interrupted(job, out, true);
    }
    let view: JobView;
    try {
      view = await getJson<JobView>(a, jobPath(job.id));
    } catch (err) {
      // The job has ended: what is left to do is to write its results.
      if (err instanceof Unreachable) return stopped(job, out, err, false);
      throw err;
    }
    ended(view);
    if (out) await writeEnded(a, view, out, stop.signal);
  } catch (err) {
    if (!(err instanceof Unreachable || err instanceof ServerStopping)) throw err;
    bar.end();
    stopped(job, out, err, true);
  } finally {
    out?.close();
  }
}
