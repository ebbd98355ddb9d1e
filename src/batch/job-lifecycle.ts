import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { SiftError } from '../common/errors';
import { BatchStore, RECOVERY_LOCK, type BatchJob } from '../dcache';
import type { Caller } from '../fetch/fetch.service';
import { JobSignals } from './job-signals';
import {
  DEFAULT_RESTART_POLICY,
  FINISHED_TARGET_STATUSES,
  finalStatus,
  isLiveJob,
  isTerminalJob,
  terminalEvent,
  type EventType,
  type RestartPolicy,
} from './job-status';

/** The error of jobs failed by a restart under the `fail` policy. */
export const SERVER_RESTARTED = 'server_restarted';
/** The error of jobs failed, under the `fail` policy, by the loss of an instance running them. */
export const INSTANCE_LOST = 'instance_lost';

/** The NOTIFY channel of job events, payload `type:jobId`. */
export const JOBS_CHANNEL = 'sift_jobs';

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

export interface RestartReport {
  failed: number;
  requeued: number;
  resumed: number;
}

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
 *   afterRestart  by each live job's on_restart policy:
 *                   fail:   → failed (server_restarted), unfinished targets failed  batch.failed
 *                   retry:  running → queued, every target pending                  batch.requeued
 *                   resume: running stays, targets caught running → pending          batch.requeued
 *                 (a queued job stays queued under retry and resume)
 *   returnInFlight at shutdown: the targets this instance holds back to pending (no event)
 *   recoverLost   a lost instance's jobs, by policy (see the method)
 */
@Injectable()
export class JobLifecycle {
  private readonly log = new Logger('lifecycle');

  constructor(
    private readonly store: BatchStore,
    private readonly clock: Clock,
    private readonly signals: JobSignals,
  ) {}

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

  /**
   * After a start, before any work is taken: every job left queued or running moves by its
   * on_restart policy (see the class comment), in one transaction.
   */
  async afterRestart(): Promise<RestartReport> {
    const now = this.clock.now();
    const report = await this.store.transaction(async (s) => {
      const report: RestartReport = { failed: 0, requeued: 0, resumed: 0 };
      const live = await s.liveJobs();
      report.failed = await s.markInFlightFailed({
        reason: SERVER_RESTARTED,
        now,
        message: 'the server restarted before this target finished',
        hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive a restart',
      });
      for (const job of live) {
        if (job.onRestart === 'fail') {
          await this.event(s, job.id, 'batch.failed', now, { status: 'failed', error: SERVER_RESTARTED });
        } else if (job.onRestart === 'retry') {
          const reset = await s.resetTargets({
            jobId: job.id,
            from: ['running', ...FINISHED_TARGET_STATUSES],
            now,
          });
          if (job.status === 'running') {
            await s.setBatchJobStatus({ id: job.id, status: 'queued', now });
            await this.event(s, job.id, 'batch.requeued', now, { policy: 'retry', targets_reset: reset });
            report.requeued++;
          } else {
            await s.touchBatchJob(job.id, now);
          }
        } else {
          // resume: finished targets are kept; those caught mid-fetch start again.
          const reset = await s.resetTargets({ jobId: job.id, from: ['running'], now });
          await s.touchBatchJob(job.id, now);
          if (job.status === 'running') {
            await this.event(s, job.id, 'batch.requeued', now, { policy: 'resume', targets_reset: reset });
            report.resumed++;
          }
        }
      }
      return report;
    });
    if (report.failed + report.requeued + report.resumed > 0) {
      this.log.log(
        `after restart: ${report.failed} failed, ${report.requeued} requeued, ${report.resumed} resumed`,
      );
    }
    return report;
  }

  /**
   * At shutdown: the targets `holder` still holds go back to pending, for another instance or a
   * restart to take up.
   */
  returnInFlight(jobId: string, holder: string): Promise<number> {
    return this.store.resetTargets({ jobId, from: ['running'], now: this.clock.now(), holder });
  }

  /**
   * A lost instance's work, by each job's on_restart policy, in one transaction that also removes
   * the instance (so it is recovered once):
   *   fail:   the job fails (instance_lost), its unfinished targets with it    batch.failed
   *   retry:  the job is queued again, every target pending                    batch.requeued
   *   resume: only the targets the lost instance held go back to pending       batch.requeued
   */
  async recoverLost(lost: string): Promise<RestartReport | undefined> {
    const now = this.clock.now();
    const report: RestartReport = { failed: 0, requeued: 0, resumed: 0 };
    const done = await this.store.transaction(async (s) => {
      // One recovery at a time across instances; the next one finds nothing left to do.
      if (!(await s.tryHousekeepingLock(RECOVERY_LOCK))) return false;
      for (const { jobId, held } of await s.jobsHeldBy(lost)) {
        const job = await s.batchJob(jobId);
        if (!job || !isLiveJob(job.status)) continue;
        const policy = job.onRestart ?? DEFAULT_RESTART_POLICY;
        if (policy === 'fail') {
          await s.failJob({
            id: jobId,
            reason: INSTANCE_LOST,
            now,
            message: 'the instance running this target was lost',
            hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive the loss of an instance',
          });
          await this.event(s, jobId, 'batch.failed', now, { status: 'failed', error: INSTANCE_LOST });
          report.failed++;
        } else if (policy === 'retry') {
          const reset = await s.resetTargets({ jobId, from: ['running', ...FINISHED_TARGET_STATUSES], now });
          await s.setBatchJobStatus({ id: jobId, status: 'queued', now });
          await this.event(s, jobId, 'batch.requeued', now, { policy, targets_reset: reset, instance: lost });
          report.requeued++;
        } else {
          await s.resetTargets({ jobId, from: ['running'], now, holder: lost });
          await s.touchBatchJob(jobId, now);
          await this.event(s, jobId, 'batch.requeued', now, { policy, targets_reset: held, instance: lost });
          report.resumed++;
        }
        s.onCommit(() => this.signals.submitted(jobId));
      }
      await s.removeInstance(lost);
      return true;
    });
    if (!done) return undefined;
    if (report.failed + report.requeued + report.resumed > 0) {
      this.log.warn(
        `instance ${lost} lost: ${report.failed} jobs failed, ${report.requeued} requeued, ${report.resumed} resumed`,
      );
    }
    return report;
  }

  /**
   * Appends the event; once it is committed, this instance's event streams and runner hear of it,
   * and so do the other instances (a NOTIFY, delivered by PostgreSQL at commit; see ClusterSignals).
   */
  private async event(s: BatchStore, jobId: string, type: EventType, at: number, data: object = {}) {
    await s.appendEvent({ jobId, type, at, data });
    await s.notify(JOBS_CHANNEL, `${type}:${jobId}`);
    s.onCommit(() => this.signals.evented(jobId));
  }
}
