import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppConfig, type CallerClass } from '../config/app-config';
import { Clock } from '../common/clock';
import { Metrics } from '../common/metrics';
import { INTERNAL_HINTS, InternalFault, SiftError, isStorageFull } from '../common/errors';
import { BatchStore } from '../dcache';
import { JobSignals } from '../batch/job-signals';
import { FetchService, type Caller, type FetchOutcome, type FetchParams } from '../fetch/fetch.service';
import { RestartService } from './restart.service';

const BUFFER = 64;
const MAX_RETRIES = 2;
const MAX_RETRY_AFTER_S = 30;
const RETRY_STATUS = new Set([429, 502, 503]);

interface PendingTarget {
  idx: number;
  url: string;
  options: string;
}

interface ActiveJob {
  id: string;
  caller: Caller;
  started: boolean;
  buffer: PendingTarget[];
  cursor: number;
  exhausted: boolean;
  refilling?: Promise<void>;
  inFlight: Map<number, AbortController>;
}

type Outcome =
  | { kind: 'done'; result: string }
  | { kind: 'failed'; code: string; message: string; hint: string }
  | { kind: 'dropped' };

function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return '';
  }
}

/**
 * Runs batch targets: a fixed pool of slots taken round-robin across live jobs (a small job is
 * not starved by a big one), at most SIFT_PER_HOST_CONCURRENCY per host, every fetch through the
 * FetchService (cache and single-flight in front). A result is written with its event in one
 * transaction, and the last one also writes the job's final status and event.
 */
@Injectable()
export class RunnerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('runner');
  private readonly jobs = new Map<string, ActiveJob>();
  private readonly hosts = new Map<string, number>();
  private readonly tasks = new Set<Promise<void>>();
  private rr = 0;
  private inFlight = 0;
  private pumping = false;
  private again = false;
  private stopped = true;
  /** While the database is full, no new target starts before this time (ms). */
  private pausedUntil = 0;

  constructor(
    private readonly store: BatchStore,
    private readonly fetcher: FetchService,
    private readonly restart: RestartService,
    private readonly signals: JobSignals,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {
    signals.onSubmitted((id) => void this.add(id));
    signals.onCancelled((id) => this.drop(id));
  }

  /** Restart reconciliation first, then the live jobs are taken up. */
  async onApplicationBootstrap(): Promise<void> {
    await this.restart.reconcile();
    this.stopped = false;
    for (const id of await this.store.liveJobIds()) await this.add(id);
  }

  /**
   * Graceful shutdown: no new targets; those in flight get SIFT_SHUTDOWN_GRACE_MS to finish, then
   * are aborted and go back to pending (a restart takes them up by the job's policy).
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stop(this.config.shutdownGraceMs);
  }

  async stop(graceMs = 0): Promise<void> {
    this.stopped = true;
    if (graceMs > 0) {
      await Promise.race([Promise.allSettled([...this.tasks]), new Promise((r) => setTimeout(r, graceMs))]);
    }
    for (const job of this.jobs.values()) for (const ac of job.inFlight.values()) ac.abort();
    await Promise.allSettled([...this.tasks]);
    const now = this.clock.now();
    for (const job of this.jobs.values()) {
      await this.store.resetTargets(job.id, ['running'], now).catch(() => undefined);
    }
    this.jobs.clear();
  }

  get stats(): { jobs: number; inFlight: number } {
    return { jobs: this.jobs.size, inFlight: this.inFlight };
  }

  /** Resolves when no target is in flight and no job is left (tests and benchmarks wait on it). */
  async idle(): Promise<void> {
    while (this.jobs.size > 0 || this.inFlight > 0) {
      await Promise.race([...this.tasks, new Promise((r) => setTimeout(r, 20))]);
    }
  }

  private async add(id: string): Promise<void> {
    if (this.stopped || this.jobs.has(id)) return;
    const job = await this.store.batchJob(id);
    if (!job || (job.status !== 'queued' && job.status !== 'running')) return;
    this.jobs.set(id, {
      id,
      caller: { name: job.caller, callerClass: job.callerClass as CallerClass },
      started: job.status === 'running',
      buffer: [],
      cursor: -1,
      exhausted: false,
      inFlight: new Map(),
    });
    this.pump();
  }

  private drop(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    for (const ac of job.inFlight.values()) ac.abort();
  }

  private refill(job: ActiveJob): Promise<void> {
    job.refilling ??= this.store
      .pendingTargets(job.id, job.cursor, BUFFER)
      .then((rows) => {
        job.buffer.push(...rows);
        if (rows.length > 0) job.cursor = rows[rows.length - 1].idx;
        if (rows.length < BUFFER) job.exhausted = true;
      })
      .finally(() => {
        job.refilling = undefined;
      });
    return job.refilling;
  }

  /** Fills free slots, one target per job in turn. Re-entrant calls fold into one more pass. */
  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.fill()
      .catch((err: Error) => this.log.error(`dispatch failed: ${err.message}`))
      .finally(() => {
        this.pumping = false;
        if (this.again) {
          this.again = false;
          this.pump();
        }
      });
  }

  private async fill(): Promise<void> {
    const wait = this.pausedUntil - Date.now();
    if (wait > 0) {
      setTimeout(() => this.pump(), wait).unref();
      return;
    }
    const perHost = this.config.perHostConcurrency;
    while (!this.stopped && this.inFlight < this.config.runnerConcurrency) {
      const ids = [...this.jobs.keys()];
      if (ids.length === 0) return;
      let dispatched = false;
      for (let n = 0; n < ids.length && this.inFlight < this.config.runnerConcurrency; n++) {
        const job = this.jobs.get(ids[(this.rr + n) % ids.length]);
        if (!job) continue;
        if (job.buffer.length === 0 && !job.exhausted) await this.refill(job);
        if (!this.jobs.has(job.id)) continue;
        const next = job.buffer[0];
        if (!next) {
          if (job.exhausted && job.inFlight.size === 0) this.jobs.delete(job.id);
          continue;
        }
        const host = hostOf(next.url);
        if ((this.hosts.get(host) ?? 0) >= perHost) continue;
        job.buffer.shift();
        this.start(job, next, host);
        dispatched = true;
        this.rr = (this.rr + n + 1) % Math.max(1, ids.length);
        break;
      }
      if (!dispatched) return;
    }
  }

  private start(job: ActiveJob, t: PendingTarget, host: string): void {
    const ac = new AbortController();
    job.inFlight.set(t.idx, ac);
    this.inFlight++;
    this.hosts.set(host, (this.hosts.get(host) ?? 0) + 1);
    const task = this.run(job, t, ac.signal)
      .catch((err: Error) => this.log.error(`target ${job.id}/${t.idx}: ${err.message}`))
      .finally(() => {
        job.inFlight.delete(t.idx);
        this.inFlight--;
        const left = (this.hosts.get(host) ?? 1) - 1;
        if (left > 0) this.hosts.set(host, left);
        else this.hosts.delete(host);
        this.tasks.delete(task);
        if (job.exhausted && job.buffer.length === 0 && job.inFlight.size === 0) this.jobs.delete(job.id);
        this.pump();
      });
    this.tasks.add(task);
  }

  private async run(job: ActiveJob, t: PendingTarget, signal: AbortSignal): Promise<void> {
    const now = this.clock.now();
    let live: boolean;
    try {
      live = await this.markRunning(job, t, now);
    } catch (err) {
      if (!isStorageFull(err)) throw err;
      // Nothing was written: the target goes back to the front of its job, and work pauses.
      job.buffer.unshift(t);
      this.pauseForStorage();
      return;
    }
    if (!live) {
      this.drop(job.id);
      return;
    }
    if (!job.started) {
      job.started = true;
      this.signals.evented(job.id);
    }
    const outcome = await this.attempt(job.caller, t, signal);
    if (outcome.kind === 'dropped') return;
    // With nothing of the job left to start, this result may be its last: the commit that ends a
    // job is durable (FULL), so the last few results of a job commit that way.
    const mayEnd = job.exhausted && job.buffer.length === 0;
    await this.writeDurably(job.id, t.idx, outcome, mayEnd);
  }

  private pauseForStorage(): void {
    if (this.pausedUntil <= Date.now())
      this.log.warn('the database is full: batch work paused, retrying every second');
    this.pausedUntil = Date.now() + 1000;
  }

  /** A result is never dropped for a full database: its write is tried again until it fits. */
  private async writeDurably(
    jobId: string,
    idx: number,
    o: Exclude<Outcome, { kind: 'dropped' }>,
    mayEnd: boolean,
  ): Promise<void> {
    for (;;) {
      try {
        return await this.write(jobId, idx, o, mayEnd);
      } catch (err) {
        if (!isStorageFull(err) || this.stopped) throw err;
        this.pauseForStorage();
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private markRunning(job: ActiveJob, t: PendingTarget, now: number): Promise<boolean> {
    return this.store.transaction(async (s) => {
      const j = await s.batchJob(job.id);
      if (!j || (j.status !== 'queued' && j.status !== 'running')) return false;
      if (j.status === 'queued') {
        await s.setBatchJobStatus(job.id, 'running', '', now);
        await s.appendEvent(job.id, 'batch.running', now, {});
      }
      await s.updateBatchTarget(job.id, t.idx, now, 'running', null, null, null);
      return true;
    });
  }

  /** Fetches with at most two retries for resets and 429/502/503 (honouring Retry-After). */
  private async attempt(caller: Caller, t: PendingTarget, signal: AbortSignal): Promise<Outcome> {
    const params = { ...(JSON.parse(t.options) as Omit<FetchParams, 'url'>), url: t.url };
    for (let attempt = 0; ; attempt++) {
      let out: FetchOutcome;
      try {
        out = await this.fetcher.fetchDetailed(caller, params, signal, { waitForExtraction: true });
      } catch (err) {
        if (signal.aborted) return { kind: 'dropped' };
        if (!(err instanceof SiftError)) return this.fault(t, err);
        const e = err;
        if (
          e.code === 'connect_error' &&
          attempt < MAX_RETRIES &&
          (await this.backoff(attempt, undefined, signal))
        ) {
          continue;
        }
        if (signal.aborted) return { kind: 'dropped' };
        return { kind: 'failed', code: e.code, message: e.message, hint: e.hint };
      }
      const status = out.envelope.status;
      if (RETRY_STATUS.has(status) && attempt < MAX_RETRIES) {
        if (out.retryAfterS === undefined || out.retryAfterS <= MAX_RETRY_AFTER_S) {
          if (await this.backoff(attempt, out.retryAfterS, signal)) continue;
          if (signal.aborted) return { kind: 'dropped' };
        }
      }
      return { kind: 'done', result: JSON.stringify(out.envelope) };
    }
  }

  /**
   * A fault of sift's own (a bug, or a crashed extraction) is not the upstream's: it is logged with
   * its details, stored under its own code, and never retried.
   */
  private fault(t: PendingTarget, err: unknown): Outcome {
    const code = err instanceof InternalFault ? err.code : 'internal';
    this.log.error(
      `target ${t.idx} (${t.url}) ${code}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    const [message, hint] = INTERNAL_HINTS[code];
    return { kind: 'failed', code, message, hint };
  }

  /** Waits before a retry; false when the wait was cut short by an abort. */
  private backoff(attempt: number, retryAfterS: number | undefined, signal: AbortSignal): Promise<boolean> {
    const ms = retryAfterS !== undefined ? retryAfterS * 1000 : 250 * 2 ** attempt;
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

  /**
   * The result and its event in one transaction, only while the job is still running (a cancelled
   * or removed job discards it); the last result also ends the job.
   */
  private async write(
    jobId: string,
    idx: number,
    o: Exclude<Outcome, { kind: 'dropped' }>,
    mayEnd: boolean,
  ): Promise<void> {
    const now = this.clock.now();
    const written = await this.store.transaction(
      async (s) => {
        const job = await s.batchJob(jobId);
        if (!job || job.status !== 'running') return false;
        if (o.kind === 'done') {
          await s.updateBatchTarget(jobId, idx, now, 'done', o.result, null, null);
          await s.appendEvent(jobId, 'target.done', now, { idx });
        } else {
          await s.updateBatchTarget(jobId, idx, now, 'failed', null, o.message, o.hint, o.code);
          await s.appendEvent(jobId, 'target.failed', now, { idx, code: o.code });
        }
        const after = (await s.batchJob(jobId))!;
        if (after.targetsDone >= after.targetsTotal) {
          const failed = after.targetsFailed ?? 0;
          const status = failed === 0 ? 'done' : failed >= after.targetsTotal ? 'failed' : 'partial';
          await s.setBatchJobStatus(jobId, status, status === 'failed' ? 'every target failed' : '', now);
          await s.appendEvent(jobId, `batch.${status}`, now, {
            targets_total: after.targetsTotal,
            targets_failed: failed,
          });
        }
        return true;
      },
      { durable: mayEnd },
    );
    if (written) {
      this.metrics.targets.inc({ status: o.kind });
      this.signals.evented(jobId);
      await this.store.evictBatchOldest(this.config.batchMaxBytes);
    }
  }
}
