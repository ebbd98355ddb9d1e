import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { SizedLru } from '../common/sized-lru';
import { BatchStore, RECOVERY_LOCK, type Webhook } from '../dcache';
import { JobSignals } from './job-signals';
import { iso, jobView } from './views';
import { DEFAULT_RESTART_POLICY, FINISHED_TARGET_STATUSES, isLiveJob, type EventType } from './job-status';

/** The error of jobs failed by a restart under the `fail` policy. */
export const SERVER_RESTARTED = 'server_restarted';
/** The error of jobs failed, under the `fail` policy, by the loss of an instance running them. */
export const INSTANCE_LOST = 'instance_lost';

/** The NOTIFY channel of job events, payload `type:jobId`. */
export const JOBS_CHANNEL = 'sift_jobs';

export interface RestartReport {
  failed: number;
  requeued: number;
  resumed: number;
}

/**
 * The transitions of the job lifecycle that take work back (a restart, a lost instance, a
 * shutdown), and the one way every transition appends an event. JobLifecycle adds the rest.
 */
export abstract class JobRecovery {
  protected readonly log = new Logger('lifecycle');
  /**
   * What never changes about a job once it is submitted, read once per job instead of at every
   * event and result: its webhook, and whether any of its targets waits for a duplicate.
   */
  private readonly facts = new SizedLru<{ hook: Webhook | undefined; dups: boolean }>(50_000, () => 1);

  constructor(
    protected readonly store: BatchStore,
    protected readonly clock: Clock,
    protected readonly signals: JobSignals,
  ) {}

  /**
   * After a start, before any work is taken: every job left queued or running moves by its
   * on_restart policy (see the class comment), in one transaction.
   */
  async afterRestart(): Promise<RestartReport> {
    const now = this.clock.now();
    const report = await this.store.transaction(async (s) => {
      const report: RestartReport = { failed: 0, requeued: 0, resumed: 0 };
      const live = await s.liveJobs();
      report.failed = await s.markInFlightFailed({
        reason: SERVER_RESTARTED,
        now,
        message: 'the server restarted before this target finished',
        hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive a restart',
      });
      // One process on SQLite: deliveries a killed process was sending are free to go again.
      await s.releaseDeliveries();
      for (const job of live) {
        if (job.onRestart === 'fail') {
          await this.event(s, job.id, 'batch.failed', now, { status: 'failed', error: SERVER_RESTARTED });
        } else if (job.onRestart === 'retry') {
          const reset = await s.resetTargets({
            jobId: job.id,
            from: ['running', ...FINISHED_TARGET_STATUSES],
            now,
          });
          if (job.status === 'running') {
            await s.setBatchJobStatus({ id: job.id, status: 'queued', now });
            await this.event(s, job.id, 'batch.requeued', now, { policy: 'retry', targets_reset: reset });
            report.requeued++;
          } else {
            await s.touchBatchJob(job.id, now);
          }
        } else {
          // resume: finished targets are kept; those caught mid-fetch start again.
          const reset = await s.resetTargets({ jobId: job.id, from: ['running'], now });
          await s.touchBatchJob(job.id, now);
          if (job.status === 'running') {
            await this.event(s, job.id, 'batch.requeued', now, { policy: 'resume', targets_reset: reset });
            report.resumed++;
          }
        }
      }
      return report;
    });
    if (report.failed + report.requeued + report.resumed > 0) {
      this.log.log(
        `after restart: ${report.failed} failed, ${report.requeued} requeued, ${report.resumed} resumed`,
      );
    }
    return report;
  }

  /**
   * At shutdown: the targets `holder` still holds go back to pending, for another instance or a
   * restart to take up.
   */
  returnInFlight(jobId: string, holder: string): Promise<number> {
    return this.store.resetTargets({ jobId, from: ['running'], now: this.clock.now(), holder });
  }

  /** Some of the targets `holder` holds running go back to pending (no event: they have not ended). */
  returnHeld(jobId: string, holder: string, idxs: number[]): Promise<number> {
    return this.store.resetTargets({ jobId, from: ['running'], now: this.clock.now(), holder, idxs });
  }

  /**
   * A lost instance's work, by each job's on_restart policy, in one transaction that also removes
   * the instance (so it is recovered once):
   *   fail:   the job fails (instance_lost), its unfinished targets with it    batch.failed
   *   retry:  the job is queued again, every target pending                    batch.requeued
   *   resume: only the targets the lost instance held go back to pending       batch.requeued
   */
  async recoverLost(lost: string): Promise<RestartReport | undefined> {
    const now = this.clock.now();
    const report: RestartReport = { failed: 0, requeued: 0, resumed: 0 };
    const done = await this.store.transaction(async (s) => {
      // One recovery at a time across instances; the next one finds nothing left to do.
      if (!(await s.tryHousekeepingLock(RECOVERY_LOCK))) return false;
      for (const { jobId, held } of await s.jobsHeldBy(lost)) {
        const job = await s.batchJob(jobId);
        if (!job || !isLiveJob(job.status)) continue;
        const policy = job.onRestart ?? DEFAULT_RESTART_POLICY;
        if (policy === 'fail') {
          await s.failJob({
            id: jobId,
            reason: INSTANCE_LOST,
            now,
            message: 'the instance running this target was lost',
            hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive the loss of an instance',
          });
          await this.event(s, jobId, 'batch.failed', now, { status: 'failed', error: INSTANCE_LOST });
          report.failed++;
        } else if (policy === 'retry') {
          const reset = await s.resetTargets({ jobId, from: ['running', ...FINISHED_TARGET_STATUSES], now });
          await s.setBatchJobStatus({ id: jobId, status: 'queued', now });
          await this.event(s, jobId, 'batch.requeued', now, { policy, targets_reset: reset, instance: lost });
          report.requeued++;
        } else {
          await s.resetTargets({ jobId, from: ['running'], now, holder: lost });
          await s.touchBatchJob(jobId, now);
          await this.event(s, jobId, 'batch.requeued', now, { policy, targets_reset: held, instance: lost });
          report.resumed++;
        }
        s.onCommit(() => this.signals.submitted(jobId));
      }
      await s.releaseDeliveries(lost);
      await s.removeInstance(lost);
      return true;
    });
    if (!done) return undefined;
    if (report.failed + report.requeued + report.resumed > 0) {
      this.log.warn(
        `instance ${lost} lost: ${report.failed} jobs failed, ${report.requeued} requeued, ${report.resumed} resumed`,
      );
    }
    return report;
  }

  /** The job's webhook and whether it has duplicates (see `facts`). */
  protected async factsOf(
    s: BatchStore,
    jobId: string,
  ): Promise<{ hook: Webhook | undefined; dups: boolean }> {
    let f = this.facts.get(jobId);
    if (!f) {
      f = { hook: await s.webhookOf(jobId), dups: await s.hasDuplicates(jobId) };
      this.facts.set(jobId, f);
    }
    return f;
  }

  /**
   * Appends the event; once it is committed, this instance's event streams and runner hear of it,
   * and so do the other instances (a NOTIFY, delivered by PostgreSQL at commit; see ClusterSignals).
   * Returns the job's targets left, as the event's insert read them.
   */
  protected async event(
    s: BatchStore,
    jobId: string,
    type: EventType,
    at: number,
    data: object = {},
  ): Promise<number> {
    const { seq, left } = await s.appendEvent(
      { jobId, type, at, data },
      { channel: JOBS_CHANNEL, payload: `${type}:${jobId}` },
    );
    s.onCommit(() => this.signals.evented(jobId));
    // A webhook that takes this type gets the event through the outbox, written with the event.
    const { hook } = await this.factsOf(s, jobId);
    if (hook?.events.includes(type)) {
      const job = (await s.batchJob(jobId))!;
      // (Jobs are stored with their TTL since webhooks exist: the default given here is never used.)
      const payload = { type, job_id: jobId, seq, at: iso(at), data, job: jobView(job, 0) };
      await s.putDelivery({ jobId, seq, type, payload: JSON.stringify(payload), now: at });
      s.onCommit(() => this.signals.deliveryQueued(jobId));
    }
    return left;
  }
}
