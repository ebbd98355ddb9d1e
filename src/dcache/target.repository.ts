import { UNFINISHED_TARGET_STATUSES, type TargetStatus } from '../common/job-status';
import { TimeSlicer } from '../common/time-slice';
import type { Tx } from './db';
import { INSERT_CHUNK, type BatchStoreMisses, type BatchTarget } from './rows';
import { TargetReader } from './target.reader';

// The host (and port) of a target's URL, normalised: what the per-host limit counts.
import { hostOf } from '../common/urls';

/** Text one insert statement writes, about (a longer row alone). */
const INSERT_BYTES = 256 * 1024;

/** The targets in statements of at most INSERT_CHUNK rows and about INSERT_BYTES of text. */
function* insertParts(targets: BatchTarget[]): Generator<BatchTarget[]> {
  let start = 0;
  let chars = 0;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i];
    const n = t.url.length + t.options.length + (t.result?.length ?? 0) + (t.error?.length ?? 0);
    if (i > start && (i - start >= INSERT_CHUNK || chars + n > INSERT_BYTES)) {
      yield targets.slice(start, i);
      start = i;
      chars = 0;
    }
    chars += n;
  }
  if (start < targets.length) yield targets.slice(start);
}

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
 * The writers of the batch_target table, inside a transaction: one row per URL of a job. Every
 * change here moves the job's counters and lease in the same statement (see counters.ts).
 */
export class TargetRepository extends TargetReader {
  private readonly pg: boolean;

  constructor(tx: Tx, misses: BatchStoreMisses) {
    super(tx.q, misses);
    this.pg = tx.pg;
  }

  /**
   * Inserts the targets under jobId in one transaction. Targets given already finished count into
   * the job's targetsDone and their results into nbytes (the schema's triggers keep both). A
   * statement per INSERT_CHUNK rows or INSERT_BYTES of text, with turns of the event loop between
   * them once `slicer`'s slice is spent: on SQLite the whole transaction was one task (10,000
   * rows about 100 ms; 500 rows of 3 KB URLs, one statement of 15 to 40 ms).
   */
  async putBatchTargets(jobId: string, targets: BatchTarget[], slicer = new TimeSlicer()): Promise<void> {
    for (const part of insertParts(targets)) {
      if (slicer.due()) await slicer.turn();
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
   * Part of ending a cancelled job's targets: its targets in [from, to) not finished (pending,
   * waiting for a duplicate, or running: its fetch is aborted and a late result discarded, see
   * finishHeldTarget) end cancelled, held by nobody. On PostgreSQL a row a claim holds (a claim
   * that began before the cancel, and finds the job cancelled) is passed over, never waited for:
   * the caller goes over the job again. Returns how many ended.
   */
  async cancelUnfinished(w: { jobId: string; now: number; from: number; to: number }): Promise<number> {
    const ended = { status: 'cancelled', holder: null, updated_at: w.now } as const;
    if (!this.pg) {
      const r = await this.q
        .updateTable('batch_target')
        .set(ended)
        .where('job_id', '=', w.jobId)
        .where('idx', '>=', w.from)
        .where('idx', '<', w.to)
        .where('status', 'in', UNFINISHED_TARGET_STATUSES)
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    }
    // The rows are locked first, in a CTE the planner cannot fold into the update: folded, with a
    // new job's row estimates, it ran the locking scan once per target (2.7 s for 2,000 of 4,000).
    const r = await this.q
      .with(
        (wb) => wb('free').materialized(),
        (db) =>
          db
            .selectFrom('batch_target')
            .select('idx')
            .where('job_id', '=', w.jobId)
            .where('idx', '>=', w.from)
            .where('idx', '<', w.to)
            .where('status', 'in', UNFINISHED_TARGET_STATUSES)
            .forUpdate()
            .skipLocked(),
      )
      .updateTable('batch_target')
      .from('free')
      .set(ended)
      .where('batch_target.job_id', '=', w.jobId)
      .whereRef('batch_target.idx', '=', 'free.idx')
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
