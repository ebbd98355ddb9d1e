import { lockJob } from '../../dcache';
import type { At } from './at';

/**
 * defer: a target running → pending, to wait for its host (paused by a 429/503 with
 * Retry-After). It has not ended, so no event. False when `holder` no longer held it.
 */
export async function deferTarget(
  at: Pick<At, 'tx' | 'now'>,
  t: { jobId: string; idx: number; holder: string },
) {
  await lockJob(at.tx, t.jobId);
  return at.tx.targets.deferHeldTarget({ ...t, now: at.now });
}
