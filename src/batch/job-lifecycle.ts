import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { SiftError } from '../common/errors';
import { Db, claimTargets, lockJob, lockSubmits, deleteJobs, type BatchJob, type Tx } from '../dcache';
import type { Caller } from '../pages/caller-policy';
import { fingerprintOf } from './canonical';
import { ENDING_WAIT_MS, cancelJob, endCancelledTargets } from './transitions/cancel';
import {
  checkCallerLimits,
  createJob,
  replayOf,
  retryDraft,
  type JobDraft,
  type SubmitLimits,
} from './job-creation';
import { JobEvents } from './job-events';
import { JobSignals } from './job-signals';
import { isLiveJob } from '../common/job-status';
import { duplicateOf, endOf, recordPage } from './crawl-growth';
import type { Claim, ResultRecord } from './lifecycle-types';

export type { Claim, ResultRecord, TargetOutcome } from './lifecycle-types';

export { INVALID_URL, type DraftTarget, type JobDraft, type SubmitLimits } from './job-creation';
export { JOBS_CHANNEL } from './job-events';
export { INSTANCE_LOST, SERVER_RESTARTED, type RestartReport } from './job-recovery';

/** Commits a caller is told of survive a power cut (see TxOptions.durable). */
const DURABLE = { durable: true };

/**
 * Every change of a job's or a target's status, each in one transaction with its events, and the
 * signals (runner, event streams) sent only once that transaction has committed. Nothing else
 * writes job or target state. The transitions:
 *
 *   submit        → queued                                   batch.queued
 *   claim         targets pending → running, held by an instance; queued → running  batch.running
 *   recordResult  target running → done | failed              target.done | target.failed
 *                 the last one: running → done | partial | failed (finalStatus)   batch.<status>
 *   cancel        queued | running → cancelled                                  batch.cancelled
 *                 then every unfinished target (pending, or running: its fetch aborted, a late
 *                 result discarded) → cancelled, in slices (transitions/cancel.ts)
 *   (restart, lost instances and shutdown: JobRecovery, job-recovery.ts)
 *
 * A transaction on an existing job takes its row first (lockJob; see dcache/locks.ts), but for a
 * claim, which takes it right before its update.
 */
@Injectable()
export class JobLifecycle {
  private readonly log = new Logger('batch');

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly signals: JobSignals,
    private readonly events: JobEvents,
  ) {}

  /**
   * Commits the job, all its targets and `batch.queued` in one durable transaction, after the
   * idempotency and live-job checks made in the same transaction. A replay returns the job the
   * key was first used for, and writes nothing.
   */
  submit(draft: JobDraft, limits: SubmitLimits): Promise<{ job: BatchJob; replayed: boolean }> {
    return this.db.transaction((tx) => this.submitIn(tx, draft, limits), DURABLE);
  }

  /** What submit does, inside the caller's transaction. */
  async submitIn(
    tx: Tx,
    draft: JobDraft,
    limits: SubmitLimits,
  ): Promise<{ job: BatchJob; replayed: boolean }> {
    await lockSubmits(tx);
    const now = this.clock.preciseNow();
    const earlier = await replayOf(tx, draft, limits, now);
    if (earlier) return { job: earlier, replayed: true };
    await checkCallerLimits(tx, draft, limits);
    return { job: await this.create(tx, draft), replayed: false };
  }

  /**
   * A new job of the parent's failed and cancelled targets (same URL and options; each knows its
   * parent_idx), with the parent's restart policy, TTL and webhook, committed as submit commits.
   * 409 not_retryable while the parent is live or when none of its targets failed or was
   * cancelled (an invalid URL does not count: fetching it again cannot help). The Idempotency-Key works as for a submit.
   * The parent is only read.
   */
  async retry(
    parentId: string,
    caller: Caller,
    idemKey: string,
    limits: SubmitLimits,
  ): Promise<{ job: BatchJob; replayed: boolean } | undefined> {
    const fingerprint = fingerprintOf({ retry_of: parentId });
    return this.db.transaction(async (tx) => {
      await lockSubmits(tx);
      const earlier = await replayOf(tx, { caller, idemKey, fingerprint }, limits, this.clock.preciseNow());
      if (earlier) return { job: earlier, replayed: true };
      const retried = await retryDraft(tx, parentId, { caller, idemKey, fingerprint });
      if (!retried) return undefined;
      await checkCallerLimits(tx, retried, limits);
      const job = await this.create(tx, retried);
      return { job, replayed: false };
    }, DURABLE);
  }

  private async create(tx: Tx, draft: JobDraft): Promise<BatchJob> {
    const job = await createJob(tx, this.events, draft, this.clock.preciseNow());
    tx.onCommit(() => this.signals.submitted(job.id));
    return job;
  }

  /**
   * Claims up to `limit` of the job's pending targets for the instance `holder` (they become
   * running, held by it), none of a host that already has `perHost` running anywhere, and makes the
   * job running if it was queued. `more`: whether pending targets are left (a claim may get none
   * while their hosts are busy). Undefined when the job is no longer live: nothing is written then.
   */
  claim(
    jobId: string,
    holder: string,
    limit: number,
    perHost = Number.MAX_SAFE_INTEGER,
  ): Promise<Claim | undefined> {
    return this.db.transaction((tx) => this.claimIn(tx, { jobId, holder, limit, perHost }));
  }

  /** What claim does, inside the caller's transaction. */
  async claimIn(
    tx: Tx,
    ask: { jobId: string; holder: string; limit: number; perHost?: number },
  ): Promise<Claim | undefined> {
    const { jobId, holder, limit, perHost = Number.MAX_SAFE_INTEGER } = ask;
    const now = this.clock.preciseNow();
    let job = await tx.jobs.batchJob(jobId);
    if (!job || !isLiveJob(job.status)) return undefined;
    const targets = await claimTargets(
      tx,
      { jobId, holder, now, nowMs: this.clock.nowMs(), limit, perHost },
      async () => {
        job = await tx.jobs.lockedBatchJob(jobId);
        return job !== undefined && isLiveJob(job.status);
      },
    );
    if (!job || !isLiveJob(job.status)) return undefined;
    // Instances claiming at once all read "queued": only the one whose update moves it says so.
    if (targets.length > 0 && job.status === 'queued' && (await tx.jobs.startBatchJob(jobId, now))) {
      await this.events.append(tx, { jobId: jobId, type: 'batch.running', at: now });
    }
    return { targets, more: await tx.targets.hasPending(jobId) };
  }

  /**
   * The target's result (or error) with its event, only while the job is running: a cancelled or
   * removed job discards it (false). When it is the job's last, the job ends in the same
   * transaction. `durable` is for a result that may be the last (see TxOptions.durable).
   */
  async recordResult(r: ResultRecord, opts: { durable?: boolean } = {}): Promise<boolean> {
    return (await this.recordResults([r], opts))[0];
  }

  /**
   * Several results, each as recordResult writes it, in one transaction (a commit per result was
   * a tenth of the runner's time): whether each was written.
   */
  async recordResults(results: ResultRecord[], opts: { durable?: boolean } = {}): Promise<boolean[]> {
    const now = this.clock.preciseNow();
    // Written in job order, each job's row taken before its targets: two transactions taking the
    // same jobs' rows in opposite orders would deadlock (PostgreSQL).
    const order = results.map((_, i) => i).sort((a, b) => cmp(results[a].jobId, results[b].jobId) || a - b);
    return this.db.transaction(async (tx) => {
      const written: boolean[] = new Array<boolean>(results.length);
      let locked: string | undefined;
      for (const i of order) {
        const r = results[i];
        if (r.jobId !== locked) await lockJob(tx, (locked = r.jobId));
        written[i] = await this.recordIn(tx, r, now);
      }
      return written;
    }, opts);
  }

  private async recordIn(tx: Tx, r: ResultRecord, now: number): Promise<boolean> {
    const { jobId, idx, holder, outcome, found } = r;
    const facts = await this.events.factsOf(tx, jobId);
    // A crawl's page that landed on, or reads as, one the job already has is done as its duplicate.
    const dup =
      facts.crawl && found && outcome.kind === 'done' ? await duplicateOf(tx, jobId, idx, found) : undefined;
    // Written only while the job runs and `holder` still holds the target (one taken back is another's
    // now, or pending again); the job's status is checked in the update itself.
    const end = endOf(outcome, found, dup);
    if (!(await tx.targets.finishHeldTarget({ jobId, idx, holder, now, ...end }))) return false;
    if (facts.crawl)
      return recordPage({ tx, events: this.events, signals: this.signals, now }, r, facts.crawl, dup);
    // Targets with the same URL and options wait for this one, and get what it got.
    const dups = facts.dups ? await tx.targets.finishDuplicates({ jobId, idx, now, ...end }) : [];
    // The statement moved the job's counters (dcache/counters.ts); each event's insert reads them.
    let left = 0;
    for (const i of [idx, ...dups]) {
      left =
        outcome.kind === 'done'
          ? await this.events.append(tx, { jobId: jobId, type: 'target.done', at: now }, { idx: i })
          : await this.events.append(
              tx,
              { jobId: jobId, type: 'target.failed', at: now },
              { idx: i, code: outcome.code },
            );
    }
    if (left <= 0) await this.events.end(tx, (await tx.jobs.batchJob(jobId))!, now);
    return true;
  }

  /**
   * The target goes back to pending to wait for its host (paused by a 429/503 with Retry-After):
   * it has not ended, so no event. False when `holder` no longer held it.
   */
  defer(jobId: string, idx: number, holder: string): Promise<boolean> {
    const now = this.clock.preciseNow();
    return this.db.transaction(async (tx) => {
      await lockJob(tx, jobId);
      return tx.targets.deferHeldTarget({ jobId, idx, holder, now });
    });
  }

  /**
   * Deletes an ended job with every row of its own (targets, events, webhook, deliveries), durably.
   * 409 not_finished while it is live; undefined when it does not exist.
   */
  async purge(jobId: string): Promise<true | undefined> {
    return this.db.transaction(async (tx) => {
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
      return true as const;
    }, DURABLE);
  }

  /**
   * The cancel (cancelJob, transitions/cancel.ts): the job, its counts and its event in one
   * durable transaction, signalled once committed; then its unfinished targets, waited for up to
   * ENDING_WAIT_MS, so the answer usually shows them ended (the sweeper ends what a stopped
   * process left).
   */
  async cancel(jobId: string): Promise<{ job: BatchJob; changed: boolean } | undefined> {
    const now = this.clock.preciseNow();
    const out = await this.db.transaction(async (tx) => {
      const got = await cancelJob(tx, this.events, jobId, now);
      if (got?.changed) tx.onCommit(() => this.signals.cancelled(jobId));
      return got;
    }, DURABLE);
    if (out?.changed) {
      const ending = endCancelledTargets(this.db, jobId, now).then(
        // Followers of its results here read the ended targets at once (others within their poll).
        () => this.signals.evented(jobId),
        (err: Error) =>
          this.log.warn(`ending the targets of cancelled job ${jobId}: ${err.message} (the sweeper goes on)`),
      );
      await Promise.race([ending, new Promise((resolve) => setTimeout(resolve, ENDING_WAIT_MS).unref())]);
    }
    return out;
  }
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
