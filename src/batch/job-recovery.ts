import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import {
  Db,
  RECOVERY_LOCK,
  failJob,
  lockJob,
  lockJobs,
  markInFlightFailed,
  tryHousekeepingLock,
} from '../dcache';
import { JobEvents } from './job-events';
import { JobSignals } from './job-signals';
import { DEFAULT_RESTART_POLICY, FINISHED_TARGET_STATUSES, isLiveJob } from '../common/job-status';

/** The error of jobs failed by a restart under the `fail` policy. */
export const SERVER_RESTARTED = 'server_restarted';
/** The error of jobs failed, under the `fail` policy, by the loss of an instance running them. */
export const INSTANCE_LOST = 'instance_lost';

export interface RestartReport {
  failed: number;
  requeued: number;
  resumed: number;
}

/**
 * The transitions of the job lifecycle that take work back (a restart, a lost instance, a
 * shutdown), each in one transaction that takes its jobs' rows first (see dcache/locks.ts):
 *
 *   afterRestart  by each live job's on_restart policy:
 *                   fail:   → failed (server_restarted), unfinished targets failed  batch.failed
 *                   retry:  running → queued, every target pending                  batch.requeued
 *                   resume: running stays, targets caught running → pending          batch.requeued
 *                 (a queued job stays queued under retry and resume)
 *   returnInFlight at shutdown: the targets this instance holds back to pending (no event)
 *   recoverLost   a lost instance's jobs, by policy (see the method)
 *
 * Only live jobs are taken back. A cancelled job's targets still pending or running end
 * cancelled just after its cancel (endCancelledTargets; the sweeper's, when the process that
 * cancelled it stopped first), whatever these do to them meanwhile, and no claim finds one: a
 * claim reads the job's status first.
 */
@Injectable()
export class JobRecovery {
  private readonly log = new Logger('lifecycle');

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly signals: JobSignals,
    private readonly events: JobEvents,
  ) {}

  /**
   * After a start, before any work is taken: every job left queued or running moves by its
   * on_restart policy (see the class comment), in one transaction.
   */
  async afterRestart(): Promise<RestartReport> {
    const now = this.clock.preciseNow();
    const report = await this.db.transaction(async (tx) => {
      const report: RestartReport = { failed: 0, requeued: 0, resumed: 0 };
      const live = await tx.jobs.liveJobs();
      await lockJobs(
        tx,
        live.map((j) => j.id),
      );
      report.failed = await markInFlightFailed(tx, {
        reason: SERVER_RESTARTED,
        now,
        message: 'the server restarted before this target finished',
        hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive a restart',
      });
      // One process on SQLite: deliveries a killed process was sending are free to go again.
      await tx.deliveries.releaseDeliveries();
      for (const job of live) {
        if (job.onRestart === 'fail') {
          await this.events.append(
            tx,
            { jobId: job.id, type: 'batch.failed', at: now },
            {
              status: 'failed',
              error: SERVER_RESTARTED,
            },
          );
        } else if (job.onRestart === 'retry') {
          const reset = await tx.targets.resetTargets({
            jobId: job.id,
            from: ['running', ...FINISHED_TARGET_STATUSES],
            now,
          });
          if (job.status === 'running') {
            await tx.jobs.setBatchJobStatus({ id: job.id, status: 'queued', now });
            await this.events.append(
              tx,
              { jobId: job.id, type: 'batch.requeued', at: now },
              {
                policy: 'retry',
                targets_reset: reset,
              },
            );
            report.requeued++;
          } else {
            await tx.jobs.touchBatchJob(job.id, now);
          }
        } else {
          // resume: finished targets are kept; those caught mid-fetch start again.
          const reset = await tx.targets.resetTargets({ jobId: job.id, from: ['running'], now });
          await tx.jobs.touchBatchJob(job.id, now);
          if (job.status === 'running') {
            await this.events.append(
              tx,
              { jobId: job.id, type: 'batch.requeued', at: now },
              {
                policy: 'resume',
                targets_reset: reset,
              },
            );
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
    const now = this.clock.preciseNow();
    return this.db.transaction(async (tx) => {
      await lockJob(tx, jobId);
      return tx.targets.resetTargets({ jobId, from: ['running'], now, holder });
    });
  }

  /** Some of the targets `holder` holds running go back to pending (no event: they have not ended). */
  returnHeld(jobId: string, holder: string, idxs: number[]): Promise<number> {
    const now = this.clock.preciseNow();
    return this.db.transaction(async (tx) => {
      await lockJob(tx, jobId);
      return tx.targets.resetTargets({ jobId, from: ['running'], now, holder, idxs });
    });
  }

  /**
   * A lost instance's work, by each job's on_restart policy, in one transaction that also removes
   * the instance (so it is recovered once):
   *   fail:   the job fails (instance_lost), its unfinished targets with it    batch.failed
   *   retry:  the job is queued again, every target pending                    batch.requeued
   *   resume: only the targets the lost instance held go back to pending       batch.requeued
   */
  async recoverLost(lost: string): Promise<RestartReport | undefined> {
    const now = this.clock.preciseNow();
    let report: RestartReport = { failed: 0, requeued: 0, resumed: 0 };
    const done = await this.db.transaction(async (tx) => {
      report = { failed: 0, requeued: 0, resumed: 0 }; // afresh at each attempt
      // One recovery at a time across instances; the next one finds nothing left to do.
      if (!(await tryHousekeepingLock(tx, RECOVERY_LOCK))) return false;
      // In job id order: each job's row is taken before its targets are changed.
      for (const { jobId, held } of await tx.targets.jobsHeldBy(lost)) {
        await lockJob(tx, jobId);
        const job = await tx.jobs.batchJob(jobId);
        if (!job || !isLiveJob(job.status)) continue;
        const policy = job.onRestart ?? DEFAULT_RESTART_POLICY;
        if (policy === 'fail') {
          await failJob(tx, jobId, {
            reason: INSTANCE_LOST,
            now,
            message: 'the instance running this target was lost',
            hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive the loss of an instance',
          });
          await this.events.append(
            tx,
            { jobId: jobId, type: 'batch.failed', at: now },
            {
              status: 'failed',
              error: INSTANCE_LOST,
            },
          );
          report.failed++;
        } else if (policy === 'retry') {
          const reset = await tx.targets.resetTargets({
            jobId,
            from: ['running', ...FINISHED_TARGET_STATUSES],
            now,
          });
          await tx.jobs.setBatchJobStatus({ id: jobId, status: 'queued', now });
          await this.events.append(
            tx,
            { jobId: jobId, type: 'batch.requeued', at: now },
            {
              policy,
              targets_reset: reset,
              instance: lost,
            },
          );
          report.requeued++;
        } else {
          await tx.targets.resetTargets({ jobId, from: ['running'], now, holder: lost });
          await tx.jobs.touchBatchJob(jobId, now);
          await this.events.append(
            tx,
            { jobId: jobId, type: 'batch.requeued', at: now },
            {
              policy,
              targets_reset: held,
              instance: lost,
            },
          );
          report.resumed++;
        }
        tx.onCommit(() => this.signals.submitted(jobId));
      }
      await tx.deliveries.releaseDeliveries(lost);
      await tx.instances.removeInstance(lost);
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
}
