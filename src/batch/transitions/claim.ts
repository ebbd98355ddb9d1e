import { isLiveJob } from '../../common/job-status';
import { claimTargets, type ClaimedTarget } from '../../dcache';
import type { At } from './at';

/** Targets claimed, and whether pending ones are left. */
export interface Claim {
  targets: ClaimedTarget[];
  more: boolean;
}

/** What a claim asks: up to `limit` targets of the job for `holder`, at most `perHost` per host. */
export interface ClaimAsk {
  jobId: string;
  holder: string;
  limit: number;
  perHost?: number;
  /** The time in ms: hosts paused until later are passed over. */
  nowMs: number;
}

/**
 * claim: targets pending → running, held by an instance; the job queued → running (batch.running).
 * Up to `limit` of the job's pending targets, none of a host that already has `perHost` running
 * anywhere. `more`: whether pending targets are left (a claim may get none while their hosts are
 * busy). Undefined when the job is no longer live: nothing is written then. The job's row is
 * taken right before the update, never while the candidates are scanned (dcache/locks.ts).
 */
export async function claimJob(at: At, ask: ClaimAsk): Promise<Claim | undefined> {
  const { tx, now } = at;
  const { jobId, holder, limit, perHost = Number.MAX_SAFE_INTEGER, nowMs } = ask;
  let job = await tx.jobs.batchJob(jobId);
  if (!job || !isLiveJob(job.status)) return undefined;
  const targets = await claimTargets(tx, { jobId, holder, now, nowMs, limit, perHost }, async () => {
    job = await tx.jobs.lockedBatchJob(jobId);
    return job !== undefined && isLiveJob(job.status);
  });
  if (!job || !isLiveJob(job.status)) return undefined;
  // Instances claiming at once all read "queued": only the one whose update moves it says so.
  if (targets.length > 0 && job.status === 'queued' && (await tx.jobs.startBatchJob(jobId, now))) {
    await at.events.append(tx, { jobId, type: 'batch.running', at: now });
  }
  return { targets, more: await tx.targets.hasPending(jobId) };
}
