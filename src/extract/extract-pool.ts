import type { Worker } from 'node:worker_threads';
import { FetchError, InternalFault } from '../common/errors';
import type { ExtractOptions, Extraction, Format } from './extract';
import { FairShare } from '../common/fair-share';
import { extractInline, selectorTooCostly } from './extract-inline';
import { clearLaunchYoungGeneration, startWorker } from './extract-worker';
import {
  DEFAULT_EXTRACT_TIMEOUT_MS,
  defaultExtractWorkers,
  serverBusy,
  type ExtractPoolOptions,
} from './pool-settings';

interface Job {
  id: number;
  /** Whose page it is: the pool is shared fairly between callers. */
  caller: string;
  html: string;
  url: string;
  format: Format;
  opts?: ExtractOptions;
  /** Cached article html to write again in `opts.formats` (see writeArticle), not a page to extract. */
  article?: boolean;
  resolve: (x: Extraction) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  /** Set once the worker has loaded the extractor: time limits count extraction, not start-up. */
  ready: boolean;
  /** Pages handed to the worker, in order: the first is being extracted, the others wait in its port. */
  jobs: Job[];
}

/**
 * Pages handed to a worker at a time. With one, a worker that finished a page idled until the main
 * thread, busy with its own work, read the answer and sent the next: on two cores the two workers
 * were about half busy while pages queued (bench/batch: 1.48x the plain script; with two, see
 * docs/benchmarks.md).
 */
const PER_WORKER = 2;
/**
 * A page waits behind another in a worker only when that one is under this many characters: a
 * shorter page extracts in under 100 ms (the shared corpora: median 2 ms under 100 KB, at most 94
 * under 300 KB), a longer one may take seconds, while the other worker could be free long before.
 */
const SHORT_PAGE = 256 * 1024;

/** Pages of callers that do not say who they are share one queue. */
const ANONYMOUS = '';

/**
 * Extraction off the event loop: a few worker threads (a second core does the DOM work while the
 * main thread serves HTTP and SQLite), each with a heap limit and a time limit. A page that
 * overruns either costs its worker, which is replaced, and fails alone; a page whose selectors
 * overrun theirs fails alone with 422 selector_too_costly, its worker kept. Callers share the
 * workers fairly (see FairShare). Size 0 extracts inline.
 */
export class ExtractPool {
  private readonly slots: Slot[] = [];
  private readonly queue: FairShare<Job>;
  /** Callers that wait for room in a full queue (the runner). */
  private readonly roomWaiters: (() => void)[] = [];
  private nextId = 0;
  private closed = false;
  readonly size: number;
  private readonly timeoutMs: number;
  private readonly heapMb: number;
  private readonly maxQueue: number;
  private readonly module: string;

  constructor(opts: ExtractPoolOptions = {}) {
    this.module = opts.module ?? require.resolve('./extract');
    this.size = opts.size ?? defaultExtractWorkers();
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_EXTRACT_TIMEOUT_MS;
    this.heapMb = opts.heapMb ?? 384;
    this.maxQueue = opts.maxQueue ?? 256;
    this.queue = new FairShare<Job>(Math.max(1, this.size * PER_WORKER));
    if (this.size > 0) clearLaunchYoungGeneration();
  }

  private spawn(): Slot {
    const worker = startWorker(this.module, this.heapMb);
    const slot: Slot = { worker, ready: false, jobs: [] };
    worker.on(
      'message',
      (m: { id: number; ok?: Extraction; err?: string; costly?: string; ready?: boolean }) => {
        if (m.ready) {
          slot.ready = true;
          this.dispatch();
          return;
        }
        const job = slot.jobs[0];
        if (!job || job.id !== m.id) return;
        this.finish(slot);
        if (m.ok) job.resolve(m.ok);
        else if (m.costly) job.reject(selectorTooCostly(m.costly));
        else job.reject(new InternalFault('extraction_failed', `extraction threw on ${job.url}: ${m.err}`));
      },
    );
    // Out of its heap the page was too large to extract; any other death of the worker is a fault.
    worker.on('error', (err: Error & { code?: string }) =>
      this.replace(
        slot,
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new FetchError('too_large', `the page could not be extracted within ${this.heapMb} MB`)
          : new InternalFault('extraction_failed', `the extraction worker failed: ${err.message}`),
      ),
    );
    worker.on('exit', () => {
      if (!this.closed && slot.jobs.length > 0)
        this.replace(slot, new InternalFault('extraction_failed', 'the extraction worker exited'));
    });
    worker.unref();
    return slot;
  }

  /**
   * The worker is lost (crashed or overran): the page it was extracting fails, those handed to it
   * after that one go back to the head of the queue, and a fresh worker takes the slot.
   */
  private replace(slot: Slot, err: Error): void {
    const [job, ...waiting] = slot.jobs;
    slot.jobs = [];
    if (job) this.queue.release(job.caller);
    if (job?.timer) clearTimeout(job.timer);
    for (const w of waiting.reverse()) this.queue.putBack(w.caller, w);
    void slot.worker.terminate();
    const i = this.slots.indexOf(slot);
    if (i >= 0 && !this.closed) {
      this.slots[i] = this.spawn();
      this.dispatch();
    }
    job?.reject(err);
  }

  /** The worker answered its first page: the next one it holds is now being extracted. */
  private finish(slot: Slot): void {
    const job = slot.jobs.shift()!;
    clearTimeout(job.timer);
    this.queue.release(job.caller);
    if (slot.jobs[0]) this.startClock(slot, slot.jobs[0]);
    this.dispatch();
  }

  /** The time limit of the page a worker is on counts from when it starts on it. */
  private startClock(slot: Slot, job: Job): void {
    job.timer = setTimeout(
      () =>
        this.replace(slot, new FetchError('timeout', `extracting the page took over ${this.timeoutMs} ms`)),
      this.timeoutMs,
    );
  }

  private dispatch(): void {
    this.grow();
    this.startJobs();
    // A page waiting or being extracted holds the process open (its caller awaits it), even while
    // its worker still loads; an idle pool does not.
    const busy = this.queue.length > 0 || this.slots.some((s) => s.jobs.length > 0);
    for (const slot of this.slots) {
      if (busy) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  /**
   * Workers start as pages need them: one for the first page, another while pages wait and none is
   * free, up to the size. A pool that extracts nothing loads no extractor (0.2 s of CPU a worker).
   */
  private grow(): void {
    if (this.closed || this.slots.length >= this.size || this.queue.length === 0) return;
    if (this.slots.some((s) => s.ready && s.jobs.length === 0)) return;
    this.slots.push(this.spawn());
  }

  /**
   * Hands waiting pages to ready workers: first one to each idle worker, then a next to each that
   * is on a short page.
   */
  private startJobs(): void {
    for (let depth = 1; depth <= PER_WORKER; depth++) {
      for (const slot of this.slots) {
        if (slot.jobs.length >= depth || !slot.ready) continue;
        if (slot.jobs.some((j) => j.html.length > SHORT_PAGE)) continue;
        const job = this.queue.take()?.item;
        if (!job) return;
        this.roomWaiters.shift()?.();
        slot.jobs.push(job);
        if (slot.jobs.length === 1) this.startClock(slot, job);
        this.post(slot, job);
      }
    }
  }

  private post(slot: Slot, job: Job): void {
    slot.worker.postMessage({
      id: job.id,
      html: job.html,
      url: job.url,
      format: job.format,
      opts: job.opts,
      article: job.article,
    });
  }

  /**
   * Extracts in a worker (or, with `article`, writes cached article html again in `extract.formats`,
   * the metadata left empty). When the queue is full, a caller that may `wait` (the runner, whose own
   * concurrency is bounded) waits for room; any other gets 503 server_busy at once. `caller` names
   * whose page it is (class and name), for the fair share of the workers.
   */
  async extract(
    html: string,
    url: string,
    format: Format,
    opts: {
      wait?: boolean;
      extract?: ExtractOptions;
      caller?: string;
      article?: boolean;
      signal?: AbortSignal;
    } = {},
  ): Promise<Extraction> {
    if (this.size > 0 && !this.closed && this.queue.length >= this.maxQueue) {
      if (!opts.wait) throw serverBusy();
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
    // Loaded only here: with workers, the DOM libraries stay out of the main thread's memory.
    if (this.size === 0) return extractInline(this.module, html, url, format, opts);
    if (this.closed) return Promise.reject(new Error('the extraction pool is closed'));
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const caller = opts.caller ?? ANONYMOUS;
      // A page that waits counts against its request's time: nobody waiting for it, it goes.
      const onAbort = () => {
        if (this.queue.remove(caller, job)) reject(signal!.reason as Error);
      };
      const job: Job = {
        id: this.nextId++,
        caller,
        html,
        url,
        format,
        opts: opts.extract,
        article: opts.article,
        resolve: (x) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(x);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(caller, job);
      this.dispatch();
    });
  }

  /** Workers started (see grow). */
  get workers(): number {
    return this.slots.length;
  }

  get pending(): number {
    return this.queue.length + this.slots.reduce((n, s) => n + s.jobs.length, 0);
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.roomWaiters.splice(0)) wake();
    const handed = this.slots.flatMap((s) => s.jobs.splice(0));
    for (const job of handed) clearTimeout(job.timer);
    for (const job of [...handed, ...this.queue.drain()])
      job.reject(new Error('the extraction pool is closed'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
