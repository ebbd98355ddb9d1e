import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { isLiveJob } from '../common/job-status';
import { Db, RECOVERY_LOCK, lockJob, lockJobs, tryHousekeepingLock } from '../dcache';
import { JobEvents } from './job-events';
import { JobSignals } from './job-signals';
import { giveBackTargets } from './transitions/give-back';
import { restartJob, type RestartOutcome } from './transitions/restart';

export { INSTANCE_LOST, SERVER_RESTARTED } from './transitions/restart';

export interface RestartReport {
  failed: number;
  requeued: number;
  resumed: number;
}

function count(report: RestartReport, outcome: RestartOutcome): void {
  if (outcome !== 'kept') report[outcome]++;
}

/**
 * The transitions of the job lifecycle that take work back, each in one transaction that takes
 * its jobs' rows first (see dcache/locks.ts). A restart and the loss of an instance move each
 * live job they cut by the one restart table (restartJob, transitions/restart.ts), and differ
 * only in scope:
 *
 *   afterRestart   at the start of the only process (SQLite): every live job
 *   recoverLost    a lost instance's: the jobs it held targets of, once across instances
 *   returnInFlight at shutdown: the targets this instance holds back to pending (no event)
 *   returnHeld     some targets this instance holds and will not run, back to pending (no event)
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
   * on_restart policy (the restart table), in one transaction.
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
      for (const job of live) count(report, await restartJob(tx, this.events, job, {}, now));
      // One process on SQLite: deliveries a killed process was sending are free to go again.
      await tx.deliveries.releaseDeliveries();
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
    return this.db.transaction((tx) => giveBackTargets({ tx, now }, { jobId, holder }));
  }

  /** Some of the targets `holder` holds running go back to pending (no event: they have not ended). */
  returnHeld(jobId: string, holder: string, idxs: number[]): Promise<number> {
    const now = this.clock.preciseNow();
    return this.db.transaction((tx) => giveBackTargets({ tx, now }, { jobId, holder, idxs }));
  }

  /**
   * A lost instance's work, by the restart table, in one transaction that also removes the
   * instance (so it is recovered once).
   */
  async recoverLost(lost: string): Promise<RestartReport | undefined> {
    const now = this.clock.preciseNow();
    let report: RestartReport = { failed: 0, requeued: 0, resumed: 0 };
    const done = await this.db.transaction(async (tx) => {
      report = { failed: 0, requeued: 0, resumed: 0 }; // afresh at each attempt
      // One recovery at a time across instances; the next one finds nothing left to do.
      if (!(await tryHousekeepingLock(tx, RECOVERY_LOCK))) return false;
      // In job id order: each job's row is taken before its targets are changed.
      for (const { jobId } of await tx.targets.jobsHeldBy(lost)) {
        await lockJob(tx, jobId);
        const job = await tx.jobs.batchJob(jobId);
        if (!job || !isLiveJob(job.status)) continue;
        count(report, await restartJob(tx, this.events, job, { lost }, now));
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
