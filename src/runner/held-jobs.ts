import type { Logger } from '@nestjs/common';
import type { AppConfig, CallerClass } from '../config/app-config';
import type { Metrics } from '../common/metrics';
import { isStorageFull, isStorageUnavailable } from '../common/errors';
import { isLiveJob } from '../common/job-status';
import type { BatchReader } from '../dcache';
import type { JobLifecycle } from '../batch/job-lifecycle';
import type { JobRecovery } from '../batch/job-recovery';
import type { Caller } from '../pages/caller-policy';
import type { PendingTarget } from './attempt';
import { crawlSpecOf, type CrawlSpec } from '../crawl';
import { linkRulesOf, type LinkRules } from '../crawl';

/** Targets claimed for a job at a time, at most. */
const CLAIM = 16;
/** How long a job whose pending targets' hosts are all busy waits before it claims again. */
const HOST_WAIT_MS = 100;

/** A live job this instance works on: targets claimed and not started, and those in flight. */
export interface ActiveJob {
  id: string;
  caller: Caller;
  buffer: PendingTarget[];
  exhausted: boolean;
  /** Not refilled before this time (ms): its pending targets' hosts were busy. */
  notBefore?: number;
  refilling?: Promise<void>;
  inFlight: Map<number, AbortController>;
  /** A crawl's spec and the rules its links are held to. */
  crawl?: { spec: CrawlSpec; rules: LinkRules };
}

export interface HeldJobsDeps {
  reader: BatchReader;
  lifecycle: JobLifecycle;
  recovery: JobRecovery;
  config: AppConfig;
  metrics: Metrics;
  log: Logger;
  /** This instance's id, once registered. */
  holder: () => string;
}

/** What the dispatcher does when the jobs change. */
export interface HeldJobsHooks {
  pump(): void;
  stopped(): boolean;
  pauseForStorage(): void;
  unreachable(err: Error, what: string): void;
}

/**
 * The live jobs this instance works on, and the targets it holds of each: jobs are taken up when
 * submitted (here or, read every poll, elsewhere) and dropped when they end or are cancelled;
 * targets are claimed a few at a time, no more than free slots; and targets the database says
 * this instance holds but that it is not working on go back to pending.
 */
export class HeldJobs {
  readonly jobs = new Map<string, ActiveJob>();

  constructor(
    private readonly deps: HeldJobsDeps,
    private readonly hooks: HeldJobsHooks,
  ) {}

  /** Takes up live jobs this instance does not know, and drops those that ended elsewhere. */
  async poll(): Promise<void> {
    const live = new Set((await this.deps.reader.jobs.liveJobs()).map((j) => j.id));
    for (const id of [...this.jobs.keys()]) {
      if (live.has(id)) continue;
      // Read again: a job submitted since the list was read is live and must not be dropped.
      const job = await this.deps.reader.jobs.batchJob(id);
      if (!job || !isLiveJob(job.status)) this.drop(id);
    }
    for (const id of live) await this.add(id);
    await this.returnOrphans();
    // A job known here may be waiting for a host whose pause is over: look again.
    this.hooks.pump();
  }

  /**
   * Targets the database says this instance holds running, but that it is not working on (a claim
   * committed whose answer was lost with the connection, a deferral that could not be written):
   * they go back to pending, so none stays running under a live instance that has given up on
   * it. Jobs with a claim under way are left for the next poll.
   */
  private async returnOrphans(): Promise<void> {
    const held = await this.deps.reader.targets.targetsHeldBy(this.deps.holder());
    const orphans = new Map<string, number[]>();
    for (const { jobId, idx } of held) {
      const job = this.jobs.get(jobId);
      if (job?.refilling) continue;
      if (job && (job.inFlight.has(idx) || job.buffer.some((t) => t.idx === idx))) continue;
      orphans.set(jobId, [...(orphans.get(jobId) ?? []), idx]);
    }
    for (const [jobId, idxs] of orphans) {
      const n = await this.deps.recovery.returnHeld(jobId, this.deps.holder(), idxs);
      if (n > 0) {
        this.deps.log.warn(`job ${jobId}: ${n} targets held here but not in flight went back to pending`);
        const job = this.jobs.get(jobId);
        if (job) job.exhausted = false;
        else await this.add(jobId);
      }
    }
  }

  async add(id: string): Promise<void> {
    if (this.hooks.stopped() || this.jobs.has(id)) return;
    const job = await this.deps.reader.jobs.batchJob(id);
    if (!job || !isLiveJob(job.status)) return;
    // Asked twice at once (a local signal and a notification): the first one stands. Replacing it
    // would lose the targets it has claimed.
    if (this.hooks.stopped() || this.jobs.has(id)) return;
    const spec = crawlSpecOf(job.crawl);
    this.jobs.set(id, {
      id,
      caller: { name: job.caller, callerClass: job.callerClass as CallerClass },
      buffer: [],
      exhausted: false,
      inFlight: new Map(),
      ...(spec ? { crawl: { spec, rules: linkRulesOf(spec) } } : {}),
    });
    this.hooks.pump();
  }

  /** A crawl's job gained targets: claimed here when it is held, taken up when it is not. */
  async grown(id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (!job) return this.add(id);
    job.exhausted = false;
    job.notBefore = undefined;
    this.hooks.pump();
  }

  drop(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    for (const ac of job.inFlight.values()) ac.abort();
  }

  /** Claims the job's next pending targets for this instance: no more than `free` slots. */
  refill(job: ActiveJob, free: number): Promise<void> {
    const want = Math.max(1, Math.min(CLAIM, free));
    job.refilling ??= this.deps.lifecycle
      .claim(job.id, this.deps.holder(), want, this.deps.config.perHostConcurrency)
      .then(
        (claimed) => {
          if (claimed === undefined) return this.drop(job.id);
          this.deps.metrics.claims.inc({ what: 'claims' });
          this.deps.metrics.claims.inc({ what: 'targets' }, claimed.targets.length);
          job.buffer.push(...claimed.targets);
          if (!claimed.more) job.exhausted = true;
          else if (claimed.targets.length === 0) this.later(job);
        },
        (err: unknown) => {
          // Nothing was claimed, or a claim whose answer was lost: returnOrphans gives it back.
          if (isStorageFull(err)) return this.hooks.pauseForStorage();
          if (isStorageUnavailable(err)) return this.hooks.unreachable(err as Error, 'claiming');
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
    setTimeout(() => this.hooks.pump(), HOST_WAIT_MS).unref();
  }
}
