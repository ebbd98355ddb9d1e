import { UNFINISHED_TARGET_STATUSES, type TargetStatus } from '../common/job-status';
import type { Tx } from './db';
import { INSERT_CHUNK, chunks, type BatchStoreMisses, type BatchTarget } from './rows';
import { TargetReader } from './target.reader';

// The host (and port) of a target's URL, normalised: what the per-host limit counts.
import { hostOf } from '../common/urls';

/** The columns a write sets: what it does not give is cleared. */
function written(w: TargetWrite) {
  return {
    status: w.status,
    result: w.result ?? null,
    error: w.error ?? null,
    hint: w.hint ?? null,
    code: w.code ?? null,
    verdict: w.verdict ?? null,
    digest: w.digest ?? null,
    duplicate_of: w.duplicateOf ?? null,
    updated_at: w.now,
  };
}

/** A target's change: what is not given is cleared. */
export interface TargetWrite {
  jobId: string;
  idx: number;
  now: number;
  status: TargetStatus;
  result?: string | null;
  error?: string | null;
  hint?: string | null;
  code?: string | null;
  /** A done target's verdict (see FetchEnvelope.verdict). */
  verdict?: string | null;
  /** A crawl's done page: its body's digest, or the earlier page it duplicates. */
  digest?: string | null;
  duplicateOf?: number | null;
}

/**
 * The writers of the batch_target table, inside a transaction: one row per URL of a job. The schema's triggers keep the job's
 * targets_done, targets_failed, nbytes and lease in step with every change here.
 */
export class TargetRepository extends TargetReader {
  constructor(tx: Tx, misses: BatchStoreMisses) {
    super(tx.q, misses);
  }

  /**
   * Inserts the targets under jobId in one transaction. Targets given already finished count into
   * the job's targetsDone and their results into nbytes (the schema's triggers keep both).
   */
  async putBatchTargets(jobId: string, targets: BatchTarget[]): Promise<void> {
    if (targets.length === 0) return;
    for (const part of chunks(targets, INSERT_CHUNK)) {
      await this.q
        .insertInto('batch_target')
        .values(
          part.map((t) => ({
            job_id: jobId,
            idx: t.idx,
            url: t.url,
            host: hostOf(t.url),
            options: t.options,
            status: t.status,
            result: t.result,
            error: t.error,
            hint: t.hint,
            code: t.code ?? null,
            parent_idx: t.parentIdx ?? null,
            dup_of: t.dupOf ?? null,
            depth: t.depth ?? null,
            found_on: t.foundOn ?? null,
            canonical: t.canonical ?? null,
          })),
        )
        .execute();
    }
  }

  /**
   * One statement: the schema's trigger moves targetsDone (once per target entering done/failed),
   * nbytes (the result's UTF-8 bytes, a rewrite replacing the old) and the lease (to now) with it.
   */
  async updateBatchTarget(w: TargetWrite): Promise<void> {
    const r = await this.q
      .updateTable('batch_target')
      .set(written(w))
      .where('job_id', '=', w.jobId)
      .where('idx', '=', w.idx)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) this.misses.updateBatchTarget++;
  }

  /**
   * The result of a target `holder` holds: written only while it still holds it running and its
   * job is running (a target taken back by a cancel, a restart or a recovery, or one of a job that
   * has ended, is not written). False when it was not.
   */
  async finishHeldTarget(w: TargetWrite & { holder: string }): Promise<boolean> {
    const r = await this.q
      .updateTable('batch_target')
      .set({ ...written(w), holder: null })
      .where('job_id', '=', w.jobId)
      .where('idx', '=', w.idx)
      .where('status', '=', 'running')
      .where('holder', '=', w.holder)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('batch_job')
            .select('batch_job.id')
            .where('batch_job.id', '=', w.jobId)
            .where('batch_job.status', '=', 'running'),
        ),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * A target `holder` holds goes back to pending, one deferral more, to wait for its host (no
   * event: it has not ended). False when it was no longer held.
   */
  async deferHeldTarget(w: { jobId: string; idx: number; holder: string; now: number }): Promise<boolean> {
    const r = await this.q
      .updateTable('batch_target')
      .set((eb) => ({
        status: 'pending',
        holder: null,
        updated_at: w.now,
        deferrals: eb('deferrals', '+', 1),
      }))
      .where('job_id', '=', w.jobId)
      .where('idx', '=', w.idx)
      .where('status', '=', 'running')
      .where('holder', '=', w.holder)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * The targets that wait for target `w.idx` (duplicates of it) get what it got; returns their
   * idx, in order.
   */
  async finishDuplicates(w: TargetWrite): Promise<number[]> {
    const rows = await this.q
      .updateTable('batch_target')
      .set({ ...written(w), holder: null })
      .where('job_id', '=', w.jobId)
      .where('dup_of', '=', w.idx)
      .where('status', 'in', ['pending', 'running'])
      .returning('idx')
      .execute();
    return rows.map((r) => r.idx).sort((a, b) => a - b);
  }

  /**
   * The cancel of a job: every target not finished (pending, waiting for a duplicate, or running:
   * its fetch is aborted and a late result discarded, see finishHeldTarget) ends cancelled, held by
   * nobody. Returns how many.
   */
  async cancelUnfinished(w: { jobId: string; now: number }): Promise<number> {
    const r = await this.q
      .updateTable('batch_target')
      .set({ status: 'cancelled', holder: null, updated_at: w.now })
      .where('job_id', '=', w.jobId)
      .where('status', 'in', UNFINISHED_TARGET_STATUSES)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /**
   * Moves the job's targets in one of `from` back to pending, clearing what they held (the
   * triggers take finished ones out of the counts). Returns how many moved.
   */
  async resetTargets(w: {
    jobId: string;
    from: readonly TargetStatus[];
    now: number;
    /** Only the targets this instance holds. */
    holder?: string;
    /** Only these targets. */
    idxs?: number[];
  }): Promise<number> {
    let q = this.q
      .updateTable('batch_target')
      .set({
        status: 'pending',
        result: null,
        error: null,
        hint: null,
        code: null,
        verdict: null,
        holder: null,
        updated_at: w.now,
      })
      .where('job_id', '=', w.jobId)
      .where('status', 'in', w.from);
    if (w.holder !== undefined) q = q.where('holder', '=', w.holder);
    if (w.idxs !== undefined) q = q.where('idx', 'in', w.idxs.length > 0 ? w.idxs : [-1]);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
}
