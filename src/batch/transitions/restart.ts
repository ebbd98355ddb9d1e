import { DEFAULT_RESTART_POLICY, FINISHED_TARGET_STATUSES } from '../../common/job-status';
import { failJob, type BatchJob, type Tx, SearchStore } from '../../dcache';
import type { JobEvents } from '../job-events';

/** The error of jobs failed by a restart under the `fail` policy. */
export const SERVER_RESTARTED = 'server_restarted';
/** The error of jobs failed, under the `fail` policy, by the loss of an instance running them. */
export const INSTANCE_LOST = 'instance_lost';

/** Whose work was cut: every process's at the start of the only one (SQLite), or a lost instance's. */
export type RestartScope = { lost?: undefined } | { lost: string };

/** What the table did to a job. */
export type RestartOutcome = 'failed' | 'requeued' | 'resumed' | 'kept';

const FAILURES = {
  restart: {
    reason: SERVER_RESTARTED,
    message: 'the server restarted before this target finished',
    hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive a restart',
  },
  lost: {
    reason: INSTANCE_LOST,
    message: 'the instance running this target was lost',
    hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive the loss of an instance',
  },
};

/**
 * The restart table: a live job whose work was cut, moved by its on_restart policy.
 *
 *            queued                         running
 *   fail     → failed, targets left failed  → failed, targets left failed      batch.failed
 *   retry    stays queued, every target     → queued, every target pending     batch.requeued
 *            pending
 *   resume   stays queued                   stays running, the cut targets     batch.requeued
 *                                           pending
 *
 * A restart cut every target running; a lost instance, those it held (`scope.lost`). The
 * caller holds the job's row (see dcache/locks.ts), in the transaction that writes this.
 */
export async function restartJob(
  tx: Tx,
  events: JobEvents,
  job: Pick<BatchJob, 'id' | 'status' | 'onRestart'>,
  scope: RestartScope,
  now: number,
): Promise<RestartOutcome> {
  const policy = job.onRestart ?? DEFAULT_RESTART_POLICY;
  const instance = scope.lost === undefined ? {} : { instance: scope.lost };
  if (policy === 'fail') {
    const failure = scope.lost === undefined ? FAILURES.restart : FAILURES.lost;
    await failJob(tx, job.id, { ...failure, now });
    await events.append(
      tx,
      { jobId: job.id, type: 'batch.failed', at: now },
      { status: 'failed', error: failure.reason },
    );
    return 'failed';
  }
  const reset = await tx.targets.resetTargets({
    jobId: job.id,
    from: policy === 'retry' ? ['running', ...FINISHED_TARGET_STATUSES] : ['running'],
    now,
    // A retry starts the whole job again; a resume only what was cut.
    holder: policy === 'resume' ? scope.lost : undefined,
  });
  // A retry clears the results it runs again: their pages leave the search index with them.
  if (policy === 'retry' && reset > 0) await SearchStore.unindexCleared(tx, job.id);
  if (job.status !== 'running') {
    await tx.jobs.touchBatchJob(job.id, now);
    return 'kept';
  }
  if (policy === 'retry') await tx.jobs.setBatchJobStatus({ id: job.id, status: 'queued', now });
  else await tx.jobs.touchBatchJob(job.id, now);
  await events.append(
    tx,
    { jobId: job.id, type: 'batch.requeued', at: now },
    { policy, targets_reset: reset, ...instance },
  );
  return policy === 'retry' ? 'requeued' : 'resumed';
}
