import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { SiftError } from '../common/errors';
import { BatchStore, type BatchJob } from '../dcache';
import type { Caller } from '../fetch/fetch.service';
import { JobRecovery } from './job-recovery';
import { JobSignals } from './job-signals';
import { finalStatus, isLiveJob, isTerminalJob, terminalEvent, type RestartPolicy } from './job-status';

export { INSTANCE_LOST, JOBS_CHANNEL, SERVER_RESTARTED, type RestartReport } from './job-recovery';

/** Commits a caller is told of survive a power cut (see BatchStore.transaction). */
const DURABLE = { durable: true };

export interface JobDraft {
  caller: Caller;
  idemKey: string;
  fingerprint: string;
  onRestart: RestartPolicy;
  /** Each target's URL and its options, as stored (JSON). */
  targets: { url: string; options: string }[];
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
  { kind: 'done'; result: string } | { kind: 'failed'; code: string; message: string; hint: string };

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
    const { caller, idemKey } = draft;
    const now = this.clock.now();
    return this.store.transaction(async (s) => {
      await s.lockSubmits();
      if (idemKey) {
        const existing = await s.batchJobByIdem(caller.name, idemKey, now, limits.idemTtlS);
        if (existing) {
          const job = (await s.batchJob(existing))!;
          if (job.fingerprint !== draft.fingerprint) {
            throw new SiftError(
              409,
              'idempotency_conflict',
              `Idempotency-Key "${idemKey}" was used for a different request`,
              'use a new key for a different request, or resend the original body',
            );
          }
          return { job, replayed: true };
        }
      }
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
      const id = randomUUID();
      await s.createBatchJob({
        id,
        caller: caller.name,
        callerClass: caller.callerClass,
        idemKey,
        status: 'queued',
        error: '',
        targetsTotal: draft.targets.length,
        targetsDone: 0,
        createdAt: now,
        lease: now,
        nbytes: 0,
        onRestart: draft.onRestart,
        fingerprint: draft.fingerprint,
      });
      await s.putBatchTargets(
        id,
        draft.targets.map((t, idx) => ({
          jobId: id,
          idx,
          url: t.url,
          options: t.options,
          status: 'pending' as const,
          result: null,
          error: null,
          hint: null,
        })),
      );
      await this.event(s, id, 'batch.queued', now, { targets_total: draft.targets.length });
      s.onCommit(() => this.signals.submitted(id));
      return { job: (await s.batchJob(id))!, replayed: false };
    }, DURABLE);
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
  ): Promise<{ targets: { idx: number; url: string; options: string }[]; more: boolean } | undefined> {
    const now = this.clock.now();
    return this.store.transaction(async (s) => {
      const job = await s.batchJob(jobId);
      if (!job || !isLiveJob(job.status)) return undefined;
      await s.lockClaims();
      const targets = await s.claimTargets({ jobId, holder, now, limit, perHost });
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
    const now = this.clock.now();
    return this.store.transaction(async (s) => {
      const job = await s.batchJob(jobId);
      if (!job || job.status !== 'running') return false;
      // Written only while `holder` still holds the target: one taken back (cancel, restart,
      // recovery of a lost instance) is another's now, or pending again.
      const written =
        outcome.kind === 'done'
          ? await s.finishHeldTarget({ jobId, idx, holder, now, status: 'done', result: outcome.result })
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
      if (outcome.kind === 'done') await this.event(s, jobId, 'target.done', now, { idx });
      else await this.event(s, jobId, 'target.failed', now, { idx, code: outcome.code });
      // The schema's triggers have moved the counts: read them back.
      const after = (await s.batchJob(jobId))!;
      if (after.targetsDone >= after.targetsTotal) {
        const failed = after.targetsFailed ?? 0;
        const status = finalStatus(after.targetsTotal, failed);
        const error = status === 'failed' ? 'every target failed' : '';
        await s.setBatchJobStatus({ id: jobId, status, error, now });
        await this.event(s, jobId, terminalEvent(status), now, {
          targets_total: after.targetsTotal,
          targets_failed: failed,
        });
      }
      return true;
    }, opts);
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
