import type { TargetStatus } from '../batch/job-status';
import type { Tx } from './db';
import { INSERT_CHUNK, chunks, type BatchStoreMisses, type BatchTarget } from './rows';
import { TargetReader } from './target.reader';

/** Pending targets a claim looks at for a job: enough to find some whose host has room. */
const CLAIM_SCAN = 256;

/** The host (and port) of a target's URL, lower-cased: what the per-host limit counts. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return '';
  }
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
   * Claims up to `limit` of the job's pending targets for `holder`, lowest idx first: they become
   * running, held by it. A target is passed over while its host already has `perHost` targets
   * running, over all jobs and all instances, or while its host is paused. Claims are serialized
   * (see lockClaims), so the per-host counts read here stay exact until the claim commits; the
   * update takes only targets still pending, so a target cancelled or taken back meanwhile is not
   * claimed.
   *
   * The choice is made here from three small reads, not in one statement: as one statement (a
   * window over the candidates, joined with the running counts), SQLite spent about 0.4 ms per
   * claim building temporary indexes and b-trees.
   */
  async claimTargets(c: {
    jobId: string;
    holder: string;
    now: number;
    /** The time in ms: hosts paused until later (a 429/503 with Retry-After) are passed over. */
    nowMs?: number;
    limit: number;
    perHost: number;
  }): Promise<{ idx: number; url: string; options: string; deferrals: number }[]> {
    const running = await this.q
      .selectFrom('batch_target')
      .select(['host', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('status', '=', 'running')
      .groupBy('host')
      .execute();
    const busy = new Map(running.map((r) => [r.host, Number(r.n)]));
    const nowMs = c.nowMs ?? c.now * 1000;
    const picked: number[] = [];
    // Most claims find their targets among the first few; a job whose first targets' hosts are
    // busy is looked at further, up to CLAIM_SCAN targets in all.
    let after = -1;
    let scanned = 0;
    for (let page = Math.min(CLAIM_SCAN, c.limit * 2); picked.length < c.limit && scanned < CLAIM_SCAN;) {
      const rows = await this.q
        .selectFrom('batch_target')
        .select(['idx', 'host'])
        .where('job_id', '=', c.jobId)
        .where('status', '=', 'pending')
        .where('dup_of', 'is', null)
        .where('idx', '>', after)
        .where('host', 'not in', (eb) =>
          eb.selectFrom('host_state').select('host').where('paused_until', '>', nowMs),
        )
        .orderBy('idx')
        .limit(page)
        .execute();
      for (const r of rows) {
        const n = busy.get(r.host) ?? 0;
        if (n >= c.perHost) continue;
        busy.set(r.host, n + 1);
        picked.push(r.idx);
        if (picked.length >= c.limit) break;
      }
      if (rows.length < page) break;
      after = rows[rows.length - 1].idx;
      scanned += rows.length;
      page = CLAIM_SCAN - scanned;
    }
    if (picked.length === 0) return [];
    const rows = await this.q
      .updateTable('batch_target')
      .set({ status: 'running', holder: c.holder, updated_at: c.now })
      .where('job_id', '=', c.jobId)
      .where('status', '=', 'pending')
      .where('idx', 'in', picked)
      .returning(['idx', 'url', 'options', 'deferrals'])
      .execute();
    return rows.sort((a, b) => a.idx - b.idx);
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
