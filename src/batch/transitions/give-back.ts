import { lockJob } from '../../dcache';
import type { At } from './at';

/**
 * give back: targets running → pending that `holder` holds, to be claimed again (by another
 * instance, or after a restart): all of a job's at shutdown, or those of `idxs` it will not run.
 * They have not ended, so no event. Returns how many went back.
 */
export async function giveBackTargets(
  at: Pick<At, 'tx' | 'now'>,
  t: { jobId: string; holder: string; idxs?: number[] },
): Promise<number> {
  await lockJob(at.tx, t.jobId);
  return at.tx.targets.resetTargets({ ...t, from: ['running'], now: at.now });
}
