import { sql } from 'kysely';
import { LIVE_JOB_STATUSES } from '../common/job-status';
import type { Tx } from './db';
import { lockJobs } from './locks';
import { ID_CHUNK, ROWS_PER_STATEMENT, chunks } from './rows';
import { TimeSlicer } from '../common/time-slice';

/*
 * What changes a whole job across its tables: removal (sweep, eviction, purge) and failure by sift
 * itself (restart, lost instance). Each takes the jobs' rows first (see locks.ts).
 */

/**
 * The tables whose rows belong to one job (by job_id), beside batch_job itself: a crawl's URLs,
 * and its pages in the search index, go with it.
 */
const JOB_TABLES = [
  'batch_target',
  'batch_event',
  'batch_webhook',
  'batch_delivery',
  'crawl_seen',
  'search_doc',
] as const;

/** The column that numbers a job's rows in a table from 0 or 1 up (a crawl's URLs: their target's idx). */
const NUMBERED_BY = {
  batch_target: 'idx',
  batch_event: 'seq',
  batch_delivery: 'seq',
  crawl_seen: 'idx',
  search_doc: 'idx',
} as const;

/** Jobs of one caller an eviction reads at once. */
const EVICT_PAGE = 100;

/**
 * Stored text one delete statement frees, about: SQLite reads every overflow page it frees, and a
 * hundred results of 2 MiB deleted at once held the event loop for 200 ms.
 */
const DELETE_BYTES = 4 * 1024 * 1024;

/** Jobs deleted together, their largest target count, and targets per statement over one large job. */
interface Part {
  ids: string[];
  span: number;
  step: number;
}

/**
 * Removes jobs with every row of theirs: targets, events, webhook, deliveries. Each statement
 * removes about ROWS_PER_STATEMENT rows and DELETE_BYTES of results (a job larger than that by
 * ranges of its idx or seq), with turns of the event loop between them once a slice is spent: on
 * SQLite a statement holds the loop while it runs, and on PostgreSQL each stays well inside
 * statement_timeout.
 */
export async function deleteJobs(tx: Tx, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await lockJobs(tx, ids);
  const slicer = new TimeSlicer();
  const pause = () => (slicer.due() ? slicer.turn() : undefined);
  for (const { ids: part, span, step: targetStep } of await partsOf(tx, ids)) {
    for (const table of JOB_TABLES) {
      const key = (NUMBERED_BY as Record<string, 'idx' | 'seq' | undefined>)[table];
      // A target's result and its search document (read again by SQLite's full-text index as it
      // goes) are deleted by the bytes they hold.
      const step = table === 'batch_target' || table === 'search_doc' ? targetStep : ROWS_PER_STATEMENT;
      // A large job by ranges of its numbers; what is left (the last events) in one more.
      for (let from = 0; key && span > step && from < span; from += step) {
        await tx.q
          .deleteFrom(table)
          .where('job_id', 'in', part)
          .where(sql.ref(key), '<', from + step)
          .execute();
        await pause();
      }
      await tx.q.deleteFrom(table).where('job_id', 'in', part).execute();
      await pause();
    }
    await tx.q.deleteFrom('batch_job').where('id', 'in', part).execute();
  }
}

/**
 * The ids in groups of at most ID_CHUNK jobs, ROWS_PER_STATEMENT targets and DELETE_BYTES of
 * results (a larger job alone, its targets deleted `step` at a time).
 */
async function partsOf(tx: Tx, ids: string[]): Promise<Part[]> {
  const parts: Part[] = [];
  for (const chunk of chunks(ids, ID_CHUNK)) {
    const rows = await tx.q
      .selectFrom('batch_job')
      .select(['id', 'targets_total', sql<number>`nbytes + row_bytes`.as('bytes')])
      .where('id', 'in', chunk)
      .execute();
    let part: Part = { ids: [], span: 0, step: ROWS_PER_STATEMENT };
    let n = 0;
    let bytes = 0;
    for (const r of rows) {
      const jobBytes = Number(r.bytes);
      if (
        part.ids.length > 0 &&
        (n + r.targets_total > ROWS_PER_STATEMENT || bytes + jobBytes > DELETE_BYTES)
      ) {
        parts.push(part);
        part = { ids: [], span: 0, step: ROWS_PER_STATEMENT };
        n = bytes = 0;
      }
      part.ids.push(r.id);
      n += r.targets_total;
      bytes += jobBytes;
      part.span = Math.max(part.span, r.targets_total);
      const perTarget = jobBytes / Math.max(1, r.targets_total);
      part.step = Math.min(part.step, Math.max(1, Math.floor(DELETE_BYTES / Math.max(1, perTarget))));
    }
    if (part.ids.length > 0) parts.push(part);
  }
  return parts;
}

/**
 * Deletes every job whose lease + ttl <= now, with its targets, events, webhook and deliveries;
 * ttl is the job's own (ttl_s) when it has one, else `ttlSeconds`. Returns how many jobs.
 */
export async function sweepBatch(tx: Tx, now: number, ttlSeconds: number): Promise<number> {
  const rows = await tx.q
    .selectFrom('batch_job')
    .select('id')
    .where(sql<number>`lease + coalesce(ttl_s, ${ttlSeconds})`, '<=', now)
    .execute();
  await deleteJobs(
    tx,
    rows.map((r) => r.id),
  );
  return rows.length;
}

/**
 * Deletes whole ended jobs until the bytes the budget counts (batchBytes: every job's results and
 * its other rows) are within maxBytes. The budget is shared: each caller (name and class) with
 * stored jobs has an equal share of it, maxBytes / their number, and the caller furthest over its
 * share, the one storing the most bytes, loses its oldest ended job first (oldest lease, then
 * insertion order); the choice is made again after each job. A caller's live jobs count in its
 * bytes but are never evicted; jobs holding no bytes are left alone (removing them frees
 * nothing). With one caller this is the seed's oldest-lease-first. Returns how many.
 */
export async function evictBatchOldest(tx: Tx, maxBytes: number): Promise<number> {
  const callers = (await tx.jobs.bytesByCaller()).map((c) => ({ ...c, next: evictable(tx, c) }));
  let total = callers.reduce((n, c) => n + c.bytes, 0);
  const victims: string[] = [];
  while (total > maxBytes && callers.length > 0) {
    let most = 0;
    for (let i = 1; i < callers.length; i++) if (callers[i].bytes > callers[most].bytes) most = i;
    const c = callers[most];
    const job = await c.next();
    if (!job) {
      callers.splice(most, 1);
      continue;
    }
    victims.push(job.id);
    c.bytes -= job.bytes;
    total -= job.bytes;
  }
  await deleteJobs(tx, victims);
  return victims.length;
}

/** A caller's ended jobs that hold bytes, one at a time, oldest lease first (read a page at a time). */
function evictable(
  tx: Tx,
  c: { caller: string; callerClass: string },
): () => Promise<{ id: string; bytes: number } | undefined> {
  let page: { id: string; bytes: number; lease: number; rid: number }[] = [];
  let after = { lease: Number.MIN_SAFE_INTEGER, rid: -1 };
  let done = false;
  return async () => {
    if (page.length === 0 && !done) {
      page = await tx.q
        .selectFrom('batch_job')
        .select(['id', sql<number>`nbytes + row_bytes`.as('bytes'), 'lease', sql<number>`rowid`.as('rid')])
        .where('caller', '=', c.caller)
        .where('caller_class', '=', c.callerClass)
        .where('status', 'not in', LIVE_JOB_STATUSES)
        .where(sql<number>`nbytes + row_bytes`, '>', 0)
        .where((eb) =>
          eb.or([
            eb('lease', '>', after.lease),
            eb.and([eb('lease', '=', after.lease), eb(sql`rowid`, '>', after.rid)]),
          ]),
        )
        .orderBy('lease')
        .orderBy(sql`rowid`)
        .limit(EVICT_PAGE)
        .execute();
      done = page.length < EVICT_PAGE;
      const last = page[page.length - 1];
      if (last) after = { lease: Number(last.lease), rid: Number(last.rid) };
    }
    const j = page.shift();
    return j && { id: j.id, bytes: Number(j.bytes) };
  };
}

/** What a job failed by sift itself (restart, lost instance) stores, job and targets. */
export interface FailWrite {
  /** The job's error and its unfinished targets' code. */
  reason: string;
  now: number;
  /** The unfinished targets' error (the reason when not given) and hint (none when not given). */
  message?: string;
  hint?: string;
}

/**
 * The restart hook of the `fail` policy: every queued/running job whose policy is fail becomes
 * failed with error = reason and lease = now, and its unfinished targets fail with the reason as
 * their code, in the transaction. Returns the count. (Its events are the lifecycle's, written in
 * the same transaction.)
 */
export async function markInFlightFailed(tx: Tx, w: FailWrite): Promise<number> {
  const rows = await tx.q
    .selectFrom('batch_job')
    .select('id')
    .where('status', 'in', LIVE_JOB_STATUSES)
    .where('on_restart', '=', 'fail')
    .execute();
  const ids = rows.map((r) => r.id);
  await lockJobs(tx, ids);
  for (const part of chunks(ids, ID_CHUNK)) await failJobs(tx, part, w);
  return ids.length;
}

/** One job failed as markInFlightFailed fails them (the lost-instance hook); its row is locked already. */
export function failJob(tx: Tx, id: string, w: FailWrite): Promise<void> {
  return failJobs(tx, [id], w);
}

async function failJobs(tx: Tx, ids: string[], w: FailWrite): Promise<void> {
  await tx.q
    .updateTable('batch_target')
    .set({
      status: 'failed',
      code: w.reason,
      error: w.message ?? w.reason,
      hint: w.hint ?? null,
      holder: null,
      updated_at: w.now,
    })
    .where('job_id', 'in', ids)
    .where('status', 'in', ['pending', 'running'])
    .execute();
  await tx.q
    .updateTable('batch_job')
    .set({ status: 'failed', error: w.reason, lease: w.now })
    .where('id', 'in', ids)
    .execute();
}
