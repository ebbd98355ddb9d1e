import { lockSubmits, type BatchJob } from '../../dcache';
import type { Caller } from '../../pages/caller-policy';
import { fingerprintOf } from '../canonical';
import {
  checkCallerLimits,
  createJob,
  replayOf,
  retryDraft,
  type JobDraft,
  type SubmitLimits,
} from '../job-creation';
import type { At } from './at';

/** A submit's answer: the job, and whether it is the one an earlier use of the key made. */
export interface Submitted {
  job: BatchJob;
  replayed: boolean;
}

/**
 * Where a submit runs: as a transition's, but its time is read once it holds the submit lock, so
 * jobs' creation times follow their commits (a job list paged by creation time misses none).
 */
export type SubmitAt = Omit<At, 'now'> & { clock: () => number };

/**
 * submit: → queued (batch.queued). The job, all its targets and its event, after the
 * idempotency and live-job checks made in the same transaction (under the submit lock). A replay
 * returns the job the key was first used for, and writes nothing.
 */
export async function submitJob(on: SubmitAt, draft: JobDraft, limits: SubmitLimits): Promise<Submitted> {
  await lockSubmits(on.tx);
  const at = { ...on, now: on.clock() };
  const earlier = await replayOf(at.tx, draft, limits, at.now);
  if (earlier) return { job: earlier, replayed: true };
  await checkCallerLimits(at.tx, draft, limits);
  return { job: await create(at, draft), replayed: false };
}

/**
 * submit, of a retry: a new job of the parent's failed and cancelled targets (same URL and
 * options; each knows its parent_idx), with the parent's restart policy, TTL and webhook.
 * 409 not_retryable while the parent is live or when none of its targets failed or was cancelled
 * (an invalid URL does not count: fetching it again cannot help). The Idempotency-Key works as
 * for a submit. The parent is only read. Undefined when it does not exist.
 */
export async function retryJob(
  on: SubmitAt,
  parentId: string,
  ask: { caller: Caller; idemKey: string },
  limits: SubmitLimits,
): Promise<Submitted | undefined> {
  const fingerprint = fingerprintOf({ retry_of: parentId });
  await lockSubmits(on.tx);
  const at = { ...on, now: on.clock() };
  const earlier = await replayOf(at.tx, { ...ask, fingerprint }, limits, at.now);
  if (earlier) return { job: earlier, replayed: true };
  const retried = await retryDraft(at.tx, parentId, { ...ask, fingerprint });
  if (!retried) return undefined;
  await checkCallerLimits(at.tx, retried, limits);
  return { job: await create(at, retried), replayed: false };
}

async function create(at: At, draft: JobDraft): Promise<BatchJob> {
  const job = await createJob(at.tx, at.events, draft, at.now);
  at.tx.onCommit(() => at.signals.submitted(job.id));
  return job;
}
