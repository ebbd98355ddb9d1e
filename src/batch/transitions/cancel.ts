import { SiftError } from '../../common/errors';
import { isTerminalJob } from '../../common/job-status';
import { TimeSlicer } from '../../common/time-slice';
import { lockJob, ROWS_PER_STATEMENT, type BatchJob, type Db, type Tx } from '../../dcache';
import type { JobEvents } from '../job-events';

/**
 * The cancel, in two steps. First one durable transaction (the caller's, holding nothing else):
 * the job's status, its counts as they will stand (every unfinished target cancelled) and
 * `batch.cancelled`. No target starts after it commits: a claim reads the job's status (under its
 * row, right before it takes targets), and a fetch in flight is aborted and its late result
 * discarded (recordResult writes only a target its holder still holds running in a running job).
 * Then the unfinished targets end cancelled, a slice per transaction (endCancelledTargets), never
 * held up by 10,000 rows or by a claim. A result committed before the cancel stands; the job row
 * orders the two. Cancelling a cancelled job changes nothing; an ended one is 409. Undefined when
 * the job does not exist.
 */
export async function cancelJob(
  tx: Tx,
  events: JobEvents,
  jobId: string,
  now: number,
): Promise<{ job: BatchJob; changed: boolean } | undefined> {
  await lockJob(tx, jobId);
  const job = await tx.jobs.batchJob(jobId);
  if (!job) return undefined;
  if (job.status === 'cancelled') return { job, changed: false };
  if (isTerminalJob(job.status)) {
    throw new SiftError(
      409,
      'not_cancellable',
      `the job is already ${job.status}`,
      'nothing to cancel: read its results',
    );
  }
  await tx.jobs.setBatchJobStatus({ id: jobId, status: 'cancelled', now });
  const ended = (await tx.jobs.batchJob(jobId))!;
  // Every target not finished is, or will be, cancelled (the job's view counts them so too).
  const counted = { ...ended, targetsCancelled: ended.targetsTotal - ended.targetsDone };
  await events.append(
    tx,
    { jobId, type: 'batch.cancelled', at: now },
    { targets_done: counted.targetsDone, targets_cancelled: counted.targetsCancelled },
  );
  return { job: counted, changed: true };
}

/**
 * How long a cancel's answer waits for its job's unfinished targets to end: a few thousand take
 * tens of milliseconds; 10,000 on a loaded PostgreSQL up to seconds, which the answer does not wait.
 */
export const ENDING_WAIT_MS = 500;
/** Times a job is gone over for rows a claim held (each such claim ends within moments). */
const PASSES = 20;
/** Between two passes over rows claims held. */
const PASS_PAUSE_MS = 50;

/**
 * Ends a cancelled job's unfinished targets (pending, waiting for a duplicate, running), a slice
 * of ROWS_PER_STATEMENT by idx per transaction, each taking the job's row first. A cancel commits
 * the job's status, its event and its counts at once, then this: a cancel of 10,000 targets is
 * answered without waiting for 10,000 rows, and never waits on a claim (a row a claim holds, the
 * claim that began before the cancel and finds the job cancelled, is passed over and gone over
 * again). Started again where a cancel's process ended before it finished (the sweeper). Returns
 * how many ended.
 */
export async function endCancelledTargets(db: Db, jobId: string, now: number): Promise<number> {
  const slicer = new TimeSlicer();
  let ended = 0;
  for (let pass = 0; pass < PASSES; pass++) {
    const { count, lastIdx } = await db.read.targets.unfinished(jobId);
    if (count === 0) break;
    if (pass > 0) await new Promise((resolve) => setTimeout(resolve, PASS_PAUSE_MS));
    for (let from = 0; from <= lastIdx; from += ROWS_PER_STATEMENT) {
      // SQLite answers in the thread: other requests get turns between slices.
      if (slicer.due()) await slicer.turn();
      ended += await db.transaction(async (tx) => {
        await lockJob(tx, jobId);
        const job = await tx.jobs.batchJob(jobId);
        if (job?.status !== 'cancelled') return 0;
        return tx.targets.cancelUnfinished({ jobId, now, from, to: from + ROWS_PER_STATEMENT });
      });
    }
  }
  return ended;
}
