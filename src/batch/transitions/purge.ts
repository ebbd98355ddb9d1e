import { SiftError } from '../../common/errors';
import { isLiveJob } from '../../common/job-status';
import { deleteJobs, lockJob, type Tx } from '../../dcache';

/**
 * purge: an ended job is deleted with every row of its own (targets, events, webhook,
 * deliveries). 409 not_finished while it is live; undefined when it does not exist.
 */
export async function purgeJob(tx: Tx, jobId: string): Promise<true | undefined> {
  await lockJob(tx, jobId);
  const job = await tx.jobs.batchJob(jobId);
  if (!job) return undefined;
  if (isLiveJob(job.status)) {
    throw new SiftError(
      409,
      'not_finished',
      `the job is still ${job.status}`,
      'cancel it first (DELETE without purge), or wait for it to end',
    );
  }
  await deleteJobs(tx, [jobId]);
  return true;
}
