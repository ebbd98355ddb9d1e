import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { SiftError } from '../common/errors';
import { BatchStore, type BatchJob, type Webhook } from '../dcache';
import { fingerprintOf } from './canonical';
import { markDuplicates } from './dedupe';
import type { Caller } from '../fetch/fetch.service';
import { JobRecovery } from './job-recovery';
import { JobSignals } from './job-signals';
import {
  DEFAULT_RESTART_POLICY,
  finalStatus,
  isLiveJob,
  isTerminalJob,
  terminalEvent,
  type RestartPolicy,
} from './job-status';

export { INSTANCE_LOST, JOBS_CHANNEL, SERVER_RESTARTED, type RestartReport } from './job-recovery';

/** The code of a target whose URL is not an absolute http(s) URL (kept under ignore_invalid_urls). */
export const INVALID_URL = 'invalid_url';

/** Commits a caller is told of survive a power cut (see BatchStore.transaction). */
const DURABLE = { durable: true };

/** A target as a job stores it. */
export interface DraftTarget {
  url: string;
  /** Its fetch options, as stored (JSON). */
  options: string;
  /** In a retry job: the parent's idx of this target. */
  parentIdx?: number;
  /** An earlier target with the same URL and options: this one gets its result. */
  dupOf?: number;
  /** Stored failed at once (an invalid URL under ignore_invalid_urls). */
  failed?: { code: string; message: string; hint: string };
}

export interface JobDraft {
  caller: Caller;
  idemKey: string;
  fingerprint: string;
  onRestart: RestartPolicy;
  targets: DraftTarget[];
  /** The job's own TTL in seconds (null: the server's default). */
  ttlS?: number | null;
  parentId?: string;
  webhook?: Webhook;
}

export interface SubmitLimits {
  idemTtlS: number;
  /** Live jobs one caller may have. */
  callerLiveJobs: number;
  /** Live jobs of all callers together. */
  totalLiveJobs: number;
}

/** How a fetched target ended. */
export type TargetOutcome =
  | { kind: 'done'; result: string; verdict?: string }
  | { kind: 'failed'; code: string; message: string; hint: string };

/**
 * Every change of a job's or a target's status, each in one transaction with its events, and the
 * signals (runner, event streams) sent only once that transaction has committed. Nothing else
 * writes job or target state. The transitions:
 *
 *   submit        → queued                                   batch.queued
 *   claim         targets pending → running, held by an instance; queued → running  batch.running
 *   recordResult  target running → done | failed              target.done | target.failed
 *                 the last one: running → done | partial | failed (finalStatus)   batch.<status>
 *   cancel        queued | running → cancelled; running targets back to pending   batch.cancelled
 *   (in JobRecovery, job-recovery.ts)
 *   afterRestart  by each live job's on_restart policy:
 *                   fail:   → failed (server_restarted), unfinished targets failed  batch.failed
 *                   retry:  running → queued, every target pending                  batch.requeued
 *                   resume: running stays, targets caught running → pending          batch.requeued
 *                 (a queued job stays queued under retry and resume)
 *   returnInFlight at shutdown: the targets this instance holds back to pending (no event)
 *   recoverLost   a lost instance's jobs, by policy (see the method)
 */
@Injectable()
export class JobLifecycle extends JobRecovery {
  constructor(store: BatchStore, clock: Clock, signals: JobSignals) {
    super(store, clock, signals);
  }

  /**
   * Commits the job, all its targets and `batch.queued` in one durable transaction, after the
   * idempotency and live-job checks made in the same transaction. A replay returns the job the
   * key was first used for, and writes nothing.
   */
  async submit(draft: JobDraft, limits: SubmitLimits): Promise<{ job: BatchJob; replayed: boolean }> {
    return this.store.transaction(async (s) => {
      await s.lockSubmits();
      const earlier = await this.replay(s, draft.caller, draft.idemKey, draft.fingerprint, limits);
      if (earlier) return { job: earlier, replayed: true };
      await this.checkLiveJobs(s, draft.caller, limits);
      return { job: await this.create(s, draft), replayed: false };
    }, DURABLE);
  }

  /**
   * A new job of the parent's failed targets (same URL and options; each knows its parent_idx),
   * with the parent's restart policy, TTL and webhook, committed as submit commits. 409
   * not_retryable while the parent is live or when none of its targets failed (an invalid URL
   * does not count: fetching it again cannot help). The Idempotency-Key works as for a submit.
   */
  async retry(
    parentId: string,
    caller: Caller,
    idemKey: string,
    limits: SubmitLimits,
  ): Promise<{ job: BatchJob; replayed: boolean } | undefined> {
    const fingerprint = fingerprintOf({ retry_of: parentId });
    return this.store.transaction(async (s) => {
      await s.lockSubmits();
      const earlier = await this.replay(s, caller, idemKey, fingerprint, limits);
      if (earlier) return { job: earlier, replayed: true };
      const parent = await s.batchJob(parentId);
      if (!parent) return undefined;
      if (isLiveJob(parent.status)) {
        throw new SiftError(
          409,
          'not_retryable',
          `the job is still ${parent.status}`,
          'wait for it to end (or cancel it), then retry its failed targets',
        );
      }
      const failed = (await s.failedTargets(parentId)).filter((t) => t.code !== INVALID_URL);
      if (failed.length === 0) {
        throw new SiftError(
          409,
          'not_retryable',
          "none of the job's targets failed (invalid URLs are not retried)",
          'nothing to retry: read its results',
        );
      }
      await this.checkLiveJobs(s, caller, limits);
      const job = await this.create(s, {
        caller,
        idemKey,
        fingerprint,
        onRestart: parent.onRestart ?? DEFAULT_RESTART_POLICY,
        ttlS: parent.ttlS ?? null,
        parentId,
        webhook: await s.webhookOf(parentId),
        targets: markDuplicates(failed.map((t) => ({ url: t.url, options: t.options, parentIdx: t.idx }))),
      });
      return { job, replayed: false };
    }, DURABLE);
  }

  /** The job an idempotency key was first used for; 409 when it was for another request. */
  private async replay(
    s: BatchStore,
    caller: Caller,
    idemKey: string,
    fingerprint: string,
    limits: SubmitLimits,
  ): Promise<BatchJob | undefined> {
    if (!idemKey) return undefined;
    const existing = await s.batchJobByIdem(caller.name, idemKey, this.clock.now(), limits.idemTtlS);
    if (!existing) return undefined;
    const job = (await s.batchJob(existing))!;
    if (job.fingerprint !== fingerprint) {
      throw new SiftError(
        409,
        'idempotency_conflict',
        `Idempotency-Key "${idemKey}" was used for a different request`,
        'use a new key for a different request, or resend the original body',
      );
    }
    return job;
  }

  private async checkLiveJobs(s: BatchStore, caller: Caller, limits: SubmitLimits): Promise<void> {
    if ((await s.liveBatchJobs(caller.name)) >= limits.callerLiveJobs) {
      throw new SiftError(
        429,
        'too_many_jobs',
        `${caller.name} already has ${limits.callerLiveJobs} live jobs`,
        'wait for a job to finish (or cancel one) and submit again',
        { 'Retry-After': '10' },
      );
    }
    if ((await s.liveBatchJobsTotal()) >= limits.totalLiveJobs) {
      throw new SiftError(
        503,
        'server_busy',
        'sift is running as many jobs as it may',
        'submit again later',
        {
          'Retry-After': '30',
        },
      );
    }
  }

  /**
   * Writes the job, its webhook, its targets and `batch.queued` (with a `target.failed` for each
   * target stored failed); a job whose every target is failed already ends at once.
   */
  private async create(s: BatchStore, draft: JobDraft): Promise<BatchJob> {
    const now = this.clock.now();
    const id = randomUUID();
    await s.createBatchJob({
      id,
      caller: draft.caller.name,
      callerClass: draft.caller.callerClass,
      idemKey: draft.idemKey,
      status: 'queued',
      error: '',
      targetsTotal: draft.targets.length,
      targetsDone: 0,
      createdAt: now,
      lease: now,
      nbytes: 0,
      onRestart: draft.onRestart,
      fingerprint: draft.fingerprint,
      ttlS: draft.ttlS ?? null,
      parentId: draft.parentId ?? null,
    });
    if (draft.webhook) await s.putWebhook(id, draft.webhook);
    await s.putBatchTargets(
      id,
      draft.targets.map((t, idx) => ({
        jobId: id,
        idx,
        url: t.url,
        options: t.options,
        status: t.failed ? ('failed' as const) : ('pending' as const),
        result: null,
        error: t.failed?.message ?? null,
        hint: t.failed?.hint ?? null,
        code: t.failed?.code ?? null,
        parentIdx: t.parentIdx ?? null,
        dupOf: t.dupOf ?? null,
      })),
    );
    await this.event(s, id, 'batch.queued', now, { targets_total: draft.targets.length });
    for (const [idx, t] of draft.targets.entries()) {
      if (t.failed) await this.event(s, id, 'target.failed', now, { idx, code: t.failed.code });
    }
    let job = (await s.batchJob(id))!;
    if (job.targetsDone >= job.targetsTotal) job = await this.end(s, job, now);
    s.onCommit(() => this.signals.submitted(id));
    return job;
  }

  /** The job has no target left: it ends done, partial or failed (finalStatus), with its event. */
  private async end(s: BatchStore, job: BatchJob, now: number): Promise<BatchJob> {
    const failed = job.targetsFailed ?? 0;
    const status = finalStatus(job.targetsTotal, failed);
    const error = status === 'failed' ? 'every target failed' : '';
    await s.setBatchJobStatus({ id: job.id, status, error, now });
    await this.event(s, job.id, terminalEvent(status), now, {
      targets_total: job.targetsTotal,
      targets_failed: failed,
    });
    return { ...job, status, error, lease: now };
  }

  /**
   * Claims up to `limit` of the job's pending targets for the instance `holder` (they become
   * running, held by it), none of a host that already has `perHost` running anywhere, and makes the
   * job running if it was queued. `more`: whether pending targets are left (a claim may get none
   * while their hosts are busy). Undefined when the job is no longer live: nothing is written then.
   */
  async claim(
    jobId: string,
    holder: string,
    limit: number,
    perHost = Number.MAX_SAFE_INTEGER,
  ): Promise<
    { targets: { idx: number; url: string; options: string; deferrals: number }[]; more: boolean } | undefined
  > {
    const now = this.clock.now();
    return this.store.transaction(async (s) => {
      const job = await s.batchJob(jobId);
      if (!job || !isLiveJob(job.status)) return undefined;
      await s.lockClaims();
      const targets = await s.claimTargets({ jobId, holder, now, nowMs: this.clock.nowMs(), limit, perHost });
      // Instances claiming at once all read "queued": only the one whose update moves it says so.
      if (targets.length > 0 && job.status === 'queued' && (await s.startBatchJob(jobId, now))) {
        await this.event(s, jobId, 'batch.running', now);
      }
      return { targets, more: await s.hasPending(jobId) };
    });
  }

  /**
   * The target's result (or error) with its event, only while the job is running: a cancelled or
   * removed job discards it (false). When it is the job's last, the job ends in the same
   * transaction. `durable` is for a result that may be the last (see BatchStore.transaction).
   */
  async recordResult(
    jobId: string,
    idx: number,
    holder: string,
    outcome: TargetOutcome,
    opts: { durable?: boolean } = {},
  ): Promise<boolean> {
    return (await this.recordResults([{ jobId, idx, holder, outcome }], opts))[0];
  }

  /**
   * Several results, each as recordResult writes it, in one transaction (a commit per result was
   * a tenth of the runner's time): whether each was written.
   */
  async recordResults(
    results: { jobId: string; idx: number; holder: string; outcome: TargetOutcome }[],
    opts: { durable?: boolean } = {},
  ): Promise<boolean[]> {
    const now = this.clock.now();
    // Written in job order: each result's count triggers lock its job's row, and two transactions
    // locking the same jobs' rows in opposite orders would deadlock (PostgreSQL).
    const order = results.map((_, i) => i).sort((a, b) => cmp(results[a].jobId, results[b].jobId) || a - b);
    return this.store.transaction(async (s) => {
      const written: boolean[] = new Array<boolean>(results.length);
      for (const i of order) {
        const r = results[i];
        written[i] = await this.recordIn(s, r.jobId, r.idx, r.holder, r.outcome, now);
      }
      return written;
    }, opts);
  }

  private async recordIn(
    s: BatchStore,
    jobId: string,
    idx: number,
    holder: string,
    outcome: TargetOutcome,
    now: number,
  ): Promise<boolean> {
    // Written only while the job runs and `holder` still holds the target: one taken back (cancel,
    // restart, recovery of a lost instance) is another's now, or pending again. One statement: the
    // job's status is checked in the update itself.
    const written =
      outcome.kind === 'done'
        ? await s.finishHeldTarget({
            jobId,
            idx,
            holder,
            now,
            status: 'done',
            result: outcome.result,
            verdict: outcome.verdict,
          })
        : await s.finishHeldTarget({
            jobId,
            idx,
            holder,
            now,
            status: 'failed',
            error: outcome.message,
            hint: outcome.hint,
            code: outcome.code,
          });
    if (!written) return false;
    // Targets with the same URL and options wait for this one, and get what it got.
    const same = { jobId, now, status: outcome.kind === 'done' ? ('done' as const) : ('failed' as const) };
    const dups = !(await this.factsOf(s, jobId)).dups
      ? []
      : outcome.kind === 'done'
        ? await s.finishDuplicates({ ...same, idx, result: outcome.result, verdict: outcome.verdict })
        : await s.finishDuplicates({
            ...same,
            idx,
            error: outcome.message,
            hint: outcome.hint,
            code: outcome.code,
          });
    // The schema's triggers have moved the counts; each event's insert reads them back.
    let left = 0;
    for (const i of [idx, ...dups]) {
      left =
        outcome.kind === 'done'
          ? await this.event(s, jobId, 'target.done', now, { idx: i })
          : await this.event(s, jobId, 'target.failed', now, { idx: i, code: outcome.code });
    }
    if (left <= 0) await this.end(s, (await s.batchJob(jobId))!, now);
    return true;
  }

  /**
   * The target goes back to pending to wait for its host (paused by a 429/503 with Retry-After):
   * it has not ended, so no event. False when `holder` no longer held it.
   */
  defer(jobId: string, idx: number, holder: string): Promise<boolean> {
    return this.store.deferHeldTarget({ jobId, idx, holder, now: this.clock.now() });
  }

  /**
   * Deletes an ended job with every row of its own (targets, events, webhook, deliveries), durably.
   * 409 not_finished while it is live; undefined when it does not exist.
   */
  async purge(jobId: string): Promise<true | undefined> {
    return this.store.transaction(async (s) => {
      const job = await s.batchJob(jobId);
      if (!job) return undefined;
      if (isLiveJob(job.status)) {
        throw new SiftError(
          409,
          'not_finished',
          `the job is still ${job.status}`,
          'cancel it first (DELETE without purge), or wait for it to end',
        );
      }
      await s.deleteJobs([jobId]);
      return true as const;
    }, DURABLE);
  }

  /**
   * One durable transition to cancelled, with its event; targets in flight go back to pending
   * (their fetches are aborted and a late result is discarded). Cancelling a cancelled job changes
   * nothing; an ended one is 409. Undefined when the job does not exist.
   */
  async cancel(jobId: string): Promise<{ job: BatchJob; changed: boolean } | undefined> {
    const now = this.clock.now();
    return this.store.transaction(async (s) => {
      const job = await s.batchJob(jobId);
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
      await s.resetTargets({ jobId, from: ['running'], now });
      await s.setBatchJobStatus({ id: jobId, status: 'cancelled', now });
      await this.event(s, jobId, 'batch.cancelled', now, { targets_done: job.targetsDone });
      s.onCommit(() => this.signals.cancelled(jobId));
      return { job: (await s.batchJob(jobId))!, changed: true };
    }, DURABLE);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
