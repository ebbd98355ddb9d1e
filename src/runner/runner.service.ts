import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppConfig, type CallerClass } from '../config/app-config';
import { Metrics } from '../common/metrics';
import { isStorageFull, isStorageUnavailable } from '../common/errors';
import { BatchReader, BatchStore, hostOf } from '../dcache';
import { JobLifecycle } from '../batch/job-lifecycle';
import { JobRecovery } from '../batch/job-recovery';
import { isLiveJob } from '../batch/job-status';
import { JobSignals } from '../batch/job-signals';
import { FetchService, type Caller } from '../fetch/fetch.service';
import { untilStored } from '../common/until-stored';
import { attempt, type PendingTarget } from './attempt';
import { ResultWriter } from './result-writer';
import { InstanceService } from './instance.service';

/**
 * Targets claimed for a job at a time, at most: no more than this instance has free slots for, so
 * it never holds back work another instance could start.
 */
const CLAIM = 16;
/** How often the jobs list is read again (work submitted, requeued or cancelled elsewhere). */
const POLL_MS = 2000;
/** How long a job whose pending targets' hosts are all busy waits before it claims again. */
const HOST_WAIT_MS = 100;

interface ActiveJob {
  id: string;
  caller: Caller;
  buffer: PendingTarget[];
  exhausted: boolean;
  /** Not refilled before this time (ms): its pending targets' hosts were busy. */
  notBefore?: number;
  refilling?: Promise<void>;
  inFlight: Map<number, AbortController>;
}

/**
 * Runs batch targets: a fixed pool of slots taken round-robin across live jobs (a small job is
 * not starved by a big one), at most SIFT_PER_HOST_CONCURRENCY per host, every fetch through the
 * FetchService (cache and single-flight in front), each retried as `attempt` says. What happens to
 * a job or a target is written by the JobLifecycle.
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
  /** Free slots a claim waits for while targets are in flight: a quarter of the pool. */
  private get claimAtLeast(): number {
    return Math.max(1, Math.floor(this.config.runnerConcurrency / 4));
  }
  /** While the database is full, no new target starts before this time (ms). */
  private pausedUntil = 0;
  private poller?: NodeJS.Timeout;
  /** The group commit of results. */
  private readonly results = new ResultWriter({
    write: (group, durable) =>
      this.lifecycle.recordResults(
        group.map((r) => ({ jobId: r.jobId, idx: r.idx, holder: this.instance.id, outcome: r.outcome })),
        // A group that may end a job commits durably (see recordResult).
        { durable },
      ),
    written: async (group, written) => {
      group.forEach((r, i) => written[i] && this.metrics.targets.inc({ status: r.outcome.kind }));
      if (written.some(Boolean)) await this.store.evictBatchOldest(this.config.batchMaxBytes);
    },
    retryAfter: (err) => {
      if (this.stopped) return false;
      if (isStorageFull(err)) this.pauseForStorage();
      else if (isStorageUnavailable(err)) this.unreachable(err as Error, 'writing results');
      else return false;
      return true;
    },
  });

  constructor(
    /** Reads of jobs; the seed's store for eviction after results. */
    private readonly reader: BatchReader,
    private readonly store: BatchStore,
    private readonly lifecycle: JobLifecycle,
    private readonly recovery: JobRecovery,
    private readonly instance: InstanceService,
    private readonly fetcher: FetchService,
    signals: JobSignals,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    signals.onSubmitted(
      (id) => void this.add(id).catch((err: Error) => this.unreachable(err, 'taking a job up')),
    );
    signals.onCancelled((id) => this.drop(id));
  }

  /**
   * This instance registers; on SQLite, restart reconciliation runs first (on PostgreSQL, the
   * recovery of lost instances stands for it). Then the live jobs are taken up, and read again
   * every POLL_MS: another instance may have submitted, requeued or cancelled one.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.instance.shared) await this.recovery.afterRestart();
    await this.instance.start();
    this.stopped = false;
    await this.poll();
    this.poller = setInterval(
      () => void this.poll().catch((err: Error) => this.unreachable(err, 'reading the jobs')),
      POLL_MS,
    );
    this.poller.unref();
  }

  /** Takes up live jobs this instance does not know, and drops those that ended elsewhere. */
  private async poll(): Promise<void> {
    const live = new Set((await this.reader.jobs.liveJobs()).map((j) => j.id));
    for (const id of [...this.jobs.keys()]) {
      if (live.has(id)) continue;
      // Read again: a job submitted since the list was read is live and must not be dropped.
      const job = await this.reader.jobs.batchJob(id);
      if (!job || !isLiveJob(job.status)) this.drop(id);
    }
    for (const id of live) await this.add(id);
    await this.returnOrphans();
    // A job known here may be waiting for a host whose pause is over: look again.
    this.pump();
  }

  /**
   * Targets the database says this instance holds running, but that it is not working on (a claim
   * committed whose answer was lost with the connection, a deferral that could not be written):
   * they go back to pending, so none stays running under a live instance that has given up on
   * it. Jobs with a claim under way are left for the next poll.
   */
  private async returnOrphans(): Promise<void> {
    const held = await this.reader.targets.targetsHeldBy(this.instance.id);
    const orphans = new Map<string, number[]>();
    for (const { jobId, idx } of held) {
      const job = this.jobs.get(jobId);
      if (job?.refilling) continue;
      if (job && (job.inFlight.has(idx) || job.buffer.some((t) => t.idx === idx))) continue;
      orphans.set(jobId, [...(orphans.get(jobId) ?? []), idx]);
    }
    for (const [jobId, idxs] of orphans) {
      const n = await this.recovery.returnHeld(jobId, this.instance.id, idxs);
      if (n > 0) {
        this.log.warn(`job ${jobId}: ${n} targets held here but not in flight went back to pending`);
        const job = this.jobs.get(jobId);
        if (job) job.exhausted = false;
        else await this.add(jobId);
      }
    }
  }

  /** Logs a database fault once per outage; other faults as errors. */
  private unreachable(err: Error, what: string): void {
    if (!isStorageUnavailable(err)) return this.log.error(`${what} failed: ${err.message}`);
    this.pauseForStorage(`the database cannot be reached (${err.message})`);
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
    clearInterval(this.poller);
    if (graceMs > 0) {
      await Promise.race([Promise.allSettled([...this.tasks]), new Promise((r) => setTimeout(r, graceMs))]);
    }
    for (const job of this.jobs.values()) for (const ac of job.inFlight.values()) ac.abort();
    await Promise.allSettled([...this.tasks]);
    for (const job of this.jobs.values()) {
      await this.recovery
        .returnInFlight(job.id, this.instance.id)
        .catch((err: Error) => this.log.warn(`at shutdown: ${err.message}`));
    }
    this.jobs.clear();
    await this.instance.stop();
  }

  /** `paused`: no target starts now because the database is full. */
  get stats(): { jobs: number; inFlight: number; paused: boolean } {
    return { jobs: this.jobs.size, inFlight: this.inFlight, paused: this.pausedUntil > Date.now() };
  }

  /** Resolves when no target is in flight and no job is left (tests and benchmarks wait on it). */
  async idle(): Promise<void> {
    while (this.jobs.size > 0 || this.inFlight > 0) {
      await Promise.race([...this.tasks, new Promise((r) => setTimeout(r, 20))]);
    }
  }

  private async add(id: string): Promise<void> {
    if (this.stopped || this.jobs.has(id)) return;
    const job = await this.reader.jobs.batchJob(id);
    if (!job || !isLiveJob(job.status)) return;
    // Asked twice at once (a local signal and a notification): the first one stands. Replacing it
    // would lose the targets it has claimed.
    if (this.stopped || this.jobs.has(id)) return;
    this.jobs.set(id, {
      id,
      caller: { name: job.caller, callerClass: job.callerClass as CallerClass },
      buffer: [],
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

  /** Claims the job's next pending targets for this instance. */
  private refill(job: ActiveJob): Promise<void> {
    const want = Math.max(1, Math.min(CLAIM, this.config.runnerConcurrency - this.inFlight));
    job.refilling ??= this.lifecycle
      .claim(job.id, this.instance.id, want, this.config.perHostConcurrency)
      .then(
        (claimed) => {
          if (claimed === undefined) return this.drop(job.id);
          this.metrics.claims.inc({ what: 'claims' });
          this.metrics.claims.inc({ what: 'targets' }, claimed.targets.length);
          job.buffer.push(...claimed.targets);
          if (!claimed.more) job.exhausted = true;
          else if (claimed.targets.length === 0) this.later(job);
        },
        (err: unknown) => {
          // Nothing was claimed, or a claim whose answer was lost: returnOrphans gives it back.
          if (isStorageFull(err)) return this.pauseForStorage();
          if (isStorageUnavailable(err)) return this.unreachable(err as Error, 'claiming');
          throw err;
        },
      )
      .finally(() => {
        job.refilling = undefined;
      });
    return job.refilling;
  }

  /**
   * Pending targets are left, but their hosts are busy (here or on another instance): the job is
   * looked at again after HOST_WAIT_MS (a slot freed by another instance), or as soon as a target
   * of this instance ends.
   */
  private later(job: ActiveJob): void {
    job.notBefore = Date.now() + HOST_WAIT_MS;
    setTimeout(() => this.pump(), HOST_WAIT_MS).unref();
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
        if (job.buffer.length === 0 && !job.exhausted) {
          // A claim is a transaction: while most slots are busy, wait until a few more are free
          // (each target that ends pumps again) rather than claim one target at a time.
          if (this.inFlight > 0 && this.config.runnerConcurrency - this.inFlight < this.claimAtLeast)
            continue;
          const wait = (job.notBefore ?? 0) - Date.now();
          // Not yet: a timer may fire a little before notBefore, so look again when it is due.
          if (wait > 0) setTimeout(() => this.pump(), wait + 1).unref();
          else await this.refill(job);
        }
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
        // A host slot of this instance is free: jobs waiting for a busy host may claim at once.
        for (const j of this.jobs.values()) j.notBefore = undefined;
        this.pump();
      });
    this.tasks.add(task);
  }

  /** Fetches a target this instance has claimed, and records how it ended. */
  private async run(job: ActiveJob, t: PendingTarget, signal: AbortSignal): Promise<void> {
    const outcome = await attempt(this.fetcher, job.caller, t, signal, this.log);
    if (outcome === undefined) return;
    if (outcome.kind === 'deferred') {
      // Back to pending: the job claims it again once its host's pause is over.
      await untilStored(() => this.lifecycle.defer(job.id, t.idx, this.instance.id), {
        gaveUp: () => this.stopped,
      });
      job.exhausted = false;
      this.metrics.targets.inc({ status: 'deferred' });
      return;
    }
    // With nothing of the job left to start, this result may be its last: the commit that ends a
    // job is durable (FULL), so the last few results of a job commit that way.
    const mayEnd = job.exhausted && job.buffer.length === 0;
    await this.results.record({ jobId: job.id, idx: t.idx, outcome, mayEnd });
  }

  private pauseForStorage(why = 'the database is full'): void {
    if (this.pausedUntil <= Date.now()) this.log.warn(`${why}: batch work paused, retrying every second`);
    this.pausedUntil = Date.now() + 1000;
  }
}
