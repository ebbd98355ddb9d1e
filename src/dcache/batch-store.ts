import type { JobStatus, TargetStatus } from '../common/job-status';
import type { Db } from './db';
import type { BatchJob, BatchStoreMisses, BatchTarget } from './rows';
import { evictBatchOldest, markInFlightFailed, sweepBatch } from './whole-jobs';

/**
 * The seed's batch store, method for method (SPEC "The batch store"): positional parameters,
 * each writer its own transaction. sift's own code writes through Db.transaction and the
 * repositories; this surface is what a caller written against the seed gets.
 *
 * Accessors are keyed by job id only (the caller filter is the API's). Reads never write; every
 * writer sets the job lease to its `now`. A miss resolves to undefined (or is a no-op for a
 * writer) and is counted; a failure rejects.
 */
export class BatchStore {
  constructor(private readonly db: Db) {}

  /** Misses per accessor. */
  get misses(): BatchStoreMisses {
    return this.db.misses;
  }

  createBatchJob(j: BatchJob): Promise<void> {
    return this.db.transaction((tx) => tx.jobs.createBatchJob(j));
  }

  batchJob(id: string): Promise<BatchJob | undefined> {
    return this.db.read.jobs.batchJob(id);
  }

  batchJobByIdem(
    caller: string,
    idemKey: string,
    now: number,
    ttlSeconds: number,
  ): Promise<string | undefined> {
    return this.db.read.jobs.batchJobByIdem(caller, idemKey, now, ttlSeconds);
  }

  liveBatchJobs(caller: string): Promise<number> {
    return this.db.read.jobs.liveBatchJobs(caller);
  }

  liveBatchJobsTotal(): Promise<number> {
    return this.db.read.jobs.liveBatchJobsTotal();
  }

  /** All the targets in one transaction. */
  putBatchTargets(jobId: string, targets: BatchTarget[]): Promise<void> {
    return this.db.transaction((tx) => tx.targets.putBatchTargets(jobId, targets));
  }

  batchTargets(jobId: string): Promise<BatchTarget[] | undefined> {
    return this.db.read.targets.batchTargets(jobId);
  }

  updateBatchTarget(
    jobId: string,
    idx: number,
    now: number,
    status: TargetStatus,
    result: string | null,
    errMsg: string | null,
    hint: string | null,
  ): Promise<void> {
    return this.db.transaction((tx) =>
      tx.targets.updateBatchTarget({ jobId, idx, now, status, result, error: errMsg, hint }),
    );
  }

  setBatchJobStatus(id: string, status: JobStatus, errMsg: string, now: number): Promise<void> {
    return this.db.transaction((tx) => tx.jobs.setBatchJobStatus({ id, status, error: errMsg, now }));
  }

  touchBatchJob(id: string, now: number): Promise<void> {
    return this.db.transaction((tx) => tx.jobs.touchBatchJob(id, now));
  }

  sweepBatch(now: number, ttlSeconds: number): Promise<number> {
    return this.db.transaction((tx) => sweepBatch(tx, now, ttlSeconds));
  }

  /**
   * Opens a transaction only when the bytes the budget counts (results and rows, see
   * JobReader.batchBytes) are over it, checked first by a read.
   */
  async evictBatchOldest(maxBytes: number): Promise<number> {
    if ((await this.db.read.jobs.batchBytes()) <= maxBytes) return 0;
    return this.db.transaction((tx) => evictBatchOldest(tx, maxBytes));
  }

  markInFlightFailed(reason: string, now: number): Promise<number> {
    return this.db.transaction((tx) => markInFlightFailed(tx, { reason, now }));
  }

  batchNbytes(): Promise<number> {
    return this.db.read.jobs.batchNbytes();
  }
}
