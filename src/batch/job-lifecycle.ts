import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Db, type BatchJob } from '../dcache';
import type { Caller } from '../pages/caller-policy';
import type { JobDraft, SubmitLimits } from './job-creation';
import { JobEvents } from './job-events';
import { JobSignals } from './job-signals';
import type { At } from './transitions/at';
import { ENDING_WAIT_MS, cancelJob, endCancelledTargets } from './transitions/cancel';
import { claimJob, type Claim, type ClaimAsk } from './transitions/claim';
import { deferTarget } from './transitions/defer';
import { purgeJob } from './transitions/purge';
import { recordResults, type ResultRecord } from './transitions/record-result';
import { retryJob, submitJob, type SubmitAt, type Submitted } from './transitions/submit';

export type { Claim } from './transitions/claim';
export type { ResultRecord, TargetOutcome } from './transitions/record-result';
export { INVALID_URL, type DraftTarget, type JobDraft, type SubmitLimits } from './job-creation';
export { JOBS_CHANNEL } from './job-events';
export { INSTANCE_LOST, SERVER_RESTARTED, type RestartReport } from './job-recovery';

/** Commits a caller is told of survive a power cut (see TxOptions.durable). */
const DURABLE = { durable: true };

/**
 * The one writer of job and target state: each transition of the lifecycle is a function over a
 * transaction in transitions/ (one file each, named as below); this runs each in a transaction of
 * its own, with its events, and the signals (runner, event streams) sent only once it commits.
 *
 *   submit        → queued                                   batch.queued        submit.ts
 *   claim         targets pending → running, held by an instance; queued → running
 *                                                            batch.running       claim.ts
 *   record        target running → done | failed              target.done | target.failed
 *                 the last one: running → done | partial | failed   batch.<status>
 *                                                                                record-result.ts
 *                 a monitor's page that changed or went       page.changed | page.removed
 *                                                                                monitor-run.ts
 *   grow a crawl  a crawl's page adds the links it found      crawl.page          grow-crawl.ts
 *   defer         target running → pending (its host paused)  (none)              defer.ts
 *   give back     targets running → pending (an instance that stops, or will not run them)
 *                                                            (none)              give-back.ts
 *   cancel        queued | running → cancelled, then every unfinished target
 *                                                            batch.cancelled     cancel.ts
 *   purge         an ended job and its rows deleted           (none)              purge.ts
 *   restart       by on_restart, after a start or a lost instance
 *                                                            batch.requeued | batch.failed
 *                                                                                restart.ts
 *   (restart, lost instances and giving back run from JobRecovery, job-recovery.ts; at.ts is
 *   where each runs: its transaction, events, signals and time)
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

  /** The submit in one durable transaction of its own. */
  submit(draft: JobDraft, limits: SubmitLimits): Promise<Submitted> {
    return this.db.transaction((tx) => this.submitIn(tx, draft, limits), DURABLE);
  }

  /** The submit inside the caller's transaction (a Firecrawl batch writes its own rows beside it). */
  submitIn(tx: At['tx'], draft: JobDraft, limits: SubmitLimits): Promise<Submitted> {
    return submitJob(this.submitAt(tx), draft, limits);
  }

  /** The retry of a job's failed and cancelled targets as a new job (retryJob), durably. */
  retry(
    parentId: string,
    caller: Caller,
    idemKey: string,
    limits: SubmitLimits,
  ): Promise<Submitted | undefined> {
    return this.db.transaction(
      (tx) => retryJob(this.submitAt(tx), parentId, { caller, idemKey }, limits),
      DURABLE,
    );
  }

  /** claimJob in a transaction of its own. */
  claim(jobId: string, holder: string, limit: number, perHost?: number): Promise<Claim | undefined> {
    return this.db.transaction((tx) => this.claimIn(tx, { jobId, holder, limit, perHost }));
  }

  /** claimJob inside the caller's transaction. */
  claimIn(tx: At['tx'], ask: Omit<ClaimAsk, 'nowMs'>): Promise<Claim | undefined> {
    return claimJob(this.at(tx), { ...ask, nowMs: this.clock.nowMs() });
  }

  /** One result (see recordResults). `durable` for a result that may be the job's last. */
  async recordResult(r: ResultRecord, opts: { durable?: boolean } = {}): Promise<boolean> {
    return (await this.recordResults([r], opts))[0];
  }

  /** Several results in one transaction: whether each was written. */
  recordResults(results: ResultRecord[], opts: { durable?: boolean } = {}): Promise<boolean[]> {
    return this.db.transaction((tx) => recordResults(this.at(tx), results), opts);
  }

  /** deferTarget in a transaction of its own. */
  defer(jobId: string, idx: number, holder: string): Promise<boolean> {
    return this.db.transaction((tx) => deferTarget(this.at(tx), { jobId, idx, holder }));
  }

  /** purgeJob, durably. */
  purge(jobId: string): Promise<true | undefined> {
    return this.db.transaction((tx) => purgeJob(tx, jobId), DURABLE);
  }

  /**
   * The cancel (cancelJob): the job, its counts and its event in one durable transaction,
   * signalled once committed; then its unfinished targets, waited for up to ENDING_WAIT_MS, so
   * the answer usually shows them ended (the sweeper ends what a stopped process left).
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

  private at(tx: At['tx']): At {
    return { tx, events: this.events, signals: this.signals, now: this.clock.preciseNow() };
  }

  private submitAt(tx: At['tx']): SubmitAt {
    return { tx, events: this.events, signals: this.signals, clock: () => this.clock.preciseNow() };
  }
}
