import { TimeSlicer } from '../common/time-slice';
import { lockJob, ROWS_PER_STATEMENT, type Db } from '../dcache';

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
