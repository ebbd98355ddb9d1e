import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../common/metrics';
import { isStorageFull, isStorageUnavailable } from '../common/errors';
import { BatchReader, BatchStore } from '../dcache';
import { hostOf } from '../common/urls';
import { JobLifecycle } from '../batch/job-lifecycle';
import { JobRecovery } from '../batch/job-recovery';
import { JobSignals } from '../batch/job-signals';
import { PageService } from '../pages/page.service';
import { SerialPass } from '../common/serial-pass';
import { untilStored } from '../common/until-stored';
import { attempt, type PendingTarget } from './attempt';
import { ResultWriter } from './result-writer';
import { InstanceService } from '../cluster/instance.service';
import { WebhookService } from '../webhooks/webhook.service';
import { HeldJobs, type ActiveJob } from './held-jobs';
import { SiteLinks, findingsOf, type PageFindings } from '../crawl';

/** How often the jobs list is read again (work submitted, requeued or cancelled elsewhere). */
const POLL_MS = 2000;

/**
 * Runs batch targets: a fixed pool of slots taken round-robin across live jobs (a small job is
 * not starved by a big one), at most SIFT_PER_HOST_CONCURRENCY per host, every fetch through the
 * PageService (cache and single-flight in front), each retried as `attempt` says. What happens to
 * a job or a target is written by the JobLifecycle.
 */
@Injectable()
export class RunnerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('runner');
  private readonly held: HeldJobs;
  private readonly jobs: Map<string, ActiveJob>;
  private readonly hosts = new Map<string, number>();
  private readonly tasks = new Set<Promise<void>>();
  private rr = 0;
  private inFlight = 0;
  /** What the last stop did with the targets in flight: finished within the grace, or returned. */
  stopReport?: { inFlight: number; finished: number; returned: number };
  private readonly filling = new SerialPass(
    () => this.fill(),
    (err) => this.log.error(`dispatch failed: ${err.message}`),
  );
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
        group.map((r) => ({
          jobId: r.jobId,
          idx: r.idx,
          holder: this.instance.id,
          outcome: r.outcome,
          found: r.found,
        })),
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
    private readonly pages: PageService,
    private readonly webhooks: WebhookService,
    private readonly links: SiteLinks,
    signals: JobSignals,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.held = new HeldJobs(
      { reader, lifecycle, recovery, config, metrics, log: this.log, holder: () => instance.id },
      {
        pump: () => this.pump(),
        stopped: () => this.stopped,
        pauseForStorage: () => this.pauseForStorage(),
        unreachable: (err, what) => this.unreachable(err, what),
      },
    );
    this.jobs = this.held.jobs;
    signals.onSubmitted(
      (id) => void this.held.add(id).catch((err: Error) => this.unreachable(err, 'taking a job up')),
    );
    signals.onCancelled((id) => this.held.drop(id));
    signals.onGrown(
      (id) => void this.held.grown(id).catch((err: Error) => this.unreachable(err, 'taking a job up')),
    );
  }

  /**
   * This instance registers; on SQLite, restart reconciliation runs first (on PostgreSQL, the
   * recovery of lost instances stands for it). Then webhook deliveries start, and the live jobs
   * are taken up and read again every POLL_MS: another instance may have submitted, requeued or
   * cancelled one.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.instance.shared) await this.recovery.afterRestart();
    await this.instance.start();
    this.webhooks.start(this.instance.id);
    this.stopped = false;
    await this.held.poll();
    this.poller = setInterval(
      () => void this.held.poll().catch((err: Error) => this.unreachable(err, 'reading the jobs')),
      POLL_MS,
    );
    this.poller.unref();
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
    const report = { inFlight: this.inFlight, finished: 0, returned: 0 };
    if (graceMs > 0) {
      // The grace's timer goes once the targets have ended: a closed app keeps no process alive.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.tasks]),
        new Promise((r) => (grace = setTimeout(r, graceMs))),
      ]);
      clearTimeout(grace);
    }
    report.finished = report.inFlight - this.inFlight;
    for (const job of this.jobs.values()) for (const ac of job.inFlight.values()) ac.abort();
    await Promise.allSettled([...this.tasks]);
    this.stopReport = report;
    // Every target the database says this instance holds, not only those of the jobs still listed
    // here: a job whose last targets were aborted has left the list.
    try {
      const held = await this.reader.targets.targetsHeldBy(this.instance.id);
      for (const jobId of new Set(held.map((t) => t.jobId))) {
        report.returned += await this.recovery.returnInFlight(jobId, this.instance.id);
      }
    } catch (err) {
      this.log.warn(`at shutdown: ${(err as Error).message}`);
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

  /** Fills free slots, one target per job in turn. Re-entrant calls fold into one more pass. */
  private pump(): void {
    this.filling.run();
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
          else await this.held.refill(job, this.config.runnerConcurrency - this.inFlight);
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
    const outcome = await attempt({ pages: this.pages, job, target: t, signal, log: this.log });
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
    const { page, ...ended } = outcome;
    let found: PageFindings | undefined;
    if (job.crawl) {
      found = page
        ? await findingsOf(this.links, { caller: job.caller, crawl: job.crawl }, t, page, signal)
        : { depth: t.depth ?? 0, links: [] };
      if (signal.aborted) return;
    }
    await this.results.record({ jobId: job.id, idx: t.idx, outcome: ended, mayEnd, found });
  }

  private pauseForStorage(why = 'the database is full'): void {
    if (this.pausedUntil <= Date.now()) this.log.warn(`${why}: batch work paused, retrying every second`);
    this.pausedUntil = Date.now() + 1000;
  }
}
