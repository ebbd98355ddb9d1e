import { sql, type Kysely, type Selectable } from 'kysely';
import type { BatchJobTable, BatchTargetTable, DB } from './schema';

export const ClassFleet = 'fleet';
export const ClassRestricted = 'restricted';

/** Job statuses that still have work to do: never byte-evicted, counted as live. */
export const LIVE_STATUSES = ['queued', 'running'] as const;
/** Job statuses an idempotency key may be replayed against. */
const REPLAYABLE_STATUSES = ['queued', 'running', 'done', 'partial'] as const;

export interface BatchJob {
  id: string;
  caller: string;
  callerClass: string;
  idemKey: string;
  status: string;
  error: string;
  targetsTotal: number;
  targetsDone: number;
  createdAt: number; // unix seconds
  lease: number; // unix seconds
  nbytes: number;
  /** Restart policy: fail | retry | resume. Stored as 'fail' when not given. */
  onRestart?: string;
  /** Fingerprint of the submitting request, for idempotent replays. */
  fingerprint?: string;
  /** How many of targetsDone ended failed. Maintained by the store. */
  targetsFailed?: number;
}

export interface BatchTarget {
  jobId: string;
  idx: number;
  url: string;
  options: string;
  status: string;
  result: string | null;
  error: string | null;
  hint: string | null;
  /** Machine-readable error code of a failed target. */
  code?: string | null;
}

export interface BatchEvent {
  jobId: string;
  seq: number;
  type: string;
  at: number;
  data: string;
}

export type BatchStoreMisses = Record<
  | 'batchJob'
  | 'batchJobByIdem'
  | 'batchTargets'
  | 'batchTarget'
  | 'updateBatchTarget'
  | 'setBatchJobStatus'
  | 'touchBatchJob',
  number
>;

// SQLite allows 32,766 bound values per statement; stay well below.
const INSERT_CHUNK = 500;
const ID_CHUNK = 500;

function toJob(r: Selectable<BatchJobTable>): BatchJob {
  return {
    id: r.id,
    caller: r.caller,
    callerClass: r.caller_class,
    idemKey: r.idem_key,
    status: r.status,
    error: r.error,
    targetsTotal: r.targets_total,
    targetsDone: r.targets_done,
    createdAt: r.created_at,
    lease: r.lease,
    nbytes: r.nbytes,
    onRestart: r.on_restart,
    fingerprint: r.fingerprint,
    targetsFailed: r.targets_failed,
  };
}

export function toTarget(r: Selectable<BatchTargetTable>): BatchTarget {
  return {
    jobId: r.job_id,
    idx: r.idx,
    url: r.url,
    options: r.options,
    status: r.status,
    result: r.result,
    error: r.error,
    hint: r.hint,
    code: r.code,
  };
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The batch job store: jobs, their targets and their events, in the one SQLite connection.
 * Accessors are keyed by job id only (the caller filter is the API's). Reads never write; every
 * writer sets the job lease to its `now`. A miss resolves to undefined (or is a no-op for a writer)
 * and is counted; a failure rejects.
 */
export class BatchStore {
  constructor(
    private readonly db: Kysely<DB>,
    readonly misses: BatchStoreMisses = {
      batchJob: 0,
      batchJobByIdem: 0,
      batchTargets: 0,
      batchTarget: 0,
      updateBatchTarget: 0,
      setBatchJobStatus: 0,
      touchBatchJob: 0,
    },
  ) {}

  /**
   * Runs fn with a store bound to one transaction, so several changes (a status and its event)
   * commit together. Inside a transaction already, it joins it.
   *
   * `durable`: what a caller is told of (a submit before its 202, a cancel before its 200, a job's
   * final status) commits with synchronous = FULL, so it survives a power cut, not only a killed
   * process; in WAL mode that also makes every earlier commit durable. Other commits stay NORMAL.
   * SQLite refuses to change the level inside a transaction, so it is set around it, on the
   * connection held for the whole of it.
   */
  transaction<T>(fn: (store: BatchStore) => Promise<T>, opts: { durable?: boolean } = {}): Promise<T> {
    if (this.db.isTransaction) return fn(this);
    if (!opts.durable) return this.db.transaction().execute((trx) => fn(new BatchStore(trx, this.misses)));
    return this.db.connection().execute(async (conn) => {
      await sql`PRAGMA synchronous = FULL`.execute(conn);
      try {
        return await conn.transaction().execute((trx) => fn(new BatchStore(trx, this.misses)));
      } finally {
        await sql`PRAGMA synchronous = NORMAL`.execute(conn);
      }
    });
  }

  async createBatchJob(j: BatchJob): Promise<void> {
    await this.db
      .insertInto('batch_job')
      .values({
        id: j.id,
        caller: j.caller,
        caller_class: j.callerClass,
        idem_key: j.idemKey,
        status: j.status,
        error: j.error,
        targets_total: j.targetsTotal,
        targets_done: j.targetsDone,
        created_at: j.createdAt,
        lease: j.lease,
        nbytes: j.nbytes,
        on_restart: j.onRestart ?? 'fail',
        fingerprint: j.fingerprint ?? '',
        targets_failed: j.targetsFailed ?? 0,
      })
      .execute();
  }

  async batchJob(id: string): Promise<BatchJob | undefined> {
    const row = await this.db.selectFrom('batch_job').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) {
      this.misses.batchJob++;
      return undefined;
    }
    return toJob(row);
  }

  async batchJobByIdem(
    caller: string,
    idemKey: string,
    now: number,
    ttlSeconds: number,
  ): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('batch_job')
      .select('id')
      .where('caller', '=', caller)
      .where('idem_key', '=', idemKey)
      .where(sql<number>`lease + ${ttlSeconds}`, '>', now)
      .where('status', 'in', REPLAYABLE_STATUSES)
      .orderBy('created_at', 'desc')
      .orderBy(sql`rowid`, 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) {
      this.misses.batchJobByIdem++;
      return undefined;
    }
    return row.id;
  }

  async liveBatchJobs(caller: string): Promise<number> {
    const row = await this.db
      .selectFrom('batch_job')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('caller', '=', caller)
      .where('status', 'in', LIVE_STATUSES)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async liveBatchJobsTotal(): Promise<number> {
    const row = await this.db
      .selectFrom('batch_job')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', LIVE_STATUSES)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Inserts the targets under jobId in one transaction. Targets given already finished count into
   * the job's targetsDone and their results into nbytes (the schema's triggers keep both).
   */
  async putBatchTargets(jobId: string, targets: BatchTarget[]): Promise<void> {
    if (targets.length === 0) return;
    await this.transaction(async (store) => {
      for (const part of chunks(targets, INSERT_CHUNK)) {
        await store.db
          .insertInto('batch_target')
          .values(
            part.map((t) => ({
              job_id: jobId,
              idx: t.idx,
              url: t.url,
              options: t.options,
              status: t.status,
              result: t.result,
              error: t.error,
              hint: t.hint,
              code: t.code ?? null,
            })),
          )
          .execute();
      }
    });
  }

  async batchTargets(jobId: string): Promise<BatchTarget[] | undefined> {
    const rows = await this.db
      .selectFrom('batch_target')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('idx')
      .execute();
    if (rows.length === 0) {
      const job = await this.db
        .selectFrom('batch_job')
        .select('id')
        .where('id', '=', jobId)
        .executeTakeFirst();
      if (!job) {
        this.misses.batchTargets++;
        return undefined;
      }
    }
    return rows.map(toTarget);
  }

  /** One page of targets with idx > after, in idx order. */
  /**
   * The UTF-8 size of each target's stored text (url, result, error, hint) after `after`, in idx
   * order, without reading the results (octet_length takes the size from the record header).
   */
  async batchResultSizes(
    jobId: string,
    after: number,
    limit: number,
  ): Promise<{ idx: number; bytes: number }[]> {
    return this.db
      .selectFrom('batch_target')
      .select([
        'idx',
        sql<number>`octet_length(url) + coalesce(octet_length(result), 0) + coalesce(octet_length(error), 0) + coalesce(octet_length(hint), 0)`.as(
          'bytes',
        ),
      ])
      .where('job_id', '=', jobId)
      .where('idx', '>', after)
      .orderBy('idx')
      .limit(limit)
      .execute();
  }

  async batchTargetsPage(jobId: string, after: number, limit: number): Promise<BatchTarget[]> {
    const rows = await this.db
      .selectFrom('batch_target')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('idx', '>', after)
      .orderBy('idx')
      .limit(limit)
      .execute();
    return rows.map(toTarget);
  }

  /**
   * One statement: the schema's trigger moves targetsDone (once per target entering done/failed),
   * nbytes (the result's UTF-8 bytes, a rewrite replacing the old) and the lease (to now) with it.
   */
  async updateBatchTarget(
    jobId: string,
    idx: number,
    now: number,
    status: string,
    result: string | null,
    errMsg: string | null,
    hint: string | null,
    code: string | null = null,
  ): Promise<void> {
    const r = await this.db
      .updateTable('batch_target')
      .set({ status, result, error: errMsg, hint, code, updated_at: now })
      .where('job_id', '=', jobId)
      .where('idx', '=', idx)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) this.misses.updateBatchTarget++;
  }

  async setBatchJobStatus(id: string, status: string, errMsg: string, now: number): Promise<void> {
    const r = await this.db
      .updateTable('batch_job')
      .set({ status, error: errMsg, lease: now })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) this.misses.setBatchJobStatus++;
  }

  async touchBatchJob(id: string, now: number): Promise<void> {
    const r = await this.db
      .updateTable('batch_job')
      .set({ lease: now })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) this.misses.touchBatchJob++;
  }

  /** Deletes every job whose lease + ttl <= now, with its targets and events. */
  async sweepBatch(now: number, ttlSeconds: number): Promise<number> {
    const cutoff = now - ttlSeconds;
    return this.transaction(async (store) => {
      const stale = store.db.selectFrom('batch_job').select('id').where('lease', '<=', cutoff);
      await store.db.deleteFrom('batch_target').where('job_id', 'in', stale).execute();
      await store.db.deleteFrom('batch_event').where('job_id', 'in', stale).execute();
      const r = await store.db.deleteFrom('batch_job').where('lease', '<=', cutoff).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }

  /**
   * Deletes whole finished jobs, oldest lease first, until the stored result bytes are within
   * maxBytes. Live jobs are never evicted, and jobs holding no bytes are left alone (removing them
   * frees nothing).
   */
  async evictBatchOldest(maxBytes: number): Promise<number> {
    let total = await this.batchNbytes();
    if (total <= maxBytes) return 0;
    return this.transaction(async (store) => {
      total = await store.batchNbytes();
      const victims: string[] = [];
      let lastLease = -Infinity;
      let lastRowid = -1;
      while (total > maxBytes) {
        const page = await store.db
          .selectFrom('batch_job')
          .select(['id', 'nbytes', 'lease', sql<number>`rowid`.as('rid')])
          .where('status', 'not in', LIVE_STATUSES)
          .where('nbytes', '>', 0)
          .where((eb) =>
            eb.or([
              eb('lease', '>', lastLease),
              eb.and([eb('lease', '=', lastLease), eb(sql`rowid`, '>', lastRowid)]),
            ]),
          )
          .orderBy('lease')
          .orderBy(sql`rowid`)
          .limit(100)
          .execute();
        if (page.length === 0) break;
        for (const j of page) {
          if (total <= maxBytes) break;
          victims.push(j.id);
          total -= j.nbytes;
          lastLease = j.lease;
          lastRowid = j.rid;
        }
      }
      await store.deleteJobs(victims);
      return victims.length;
    });
  }

  /** Removes jobs with their targets and events. */
  async deleteJobs(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.transaction(async (store) => {
      for (const part of chunks(ids, ID_CHUNK)) {
        await store.db.deleteFrom('batch_target').where('job_id', 'in', part).execute();
        await store.db.deleteFrom('batch_event').where('job_id', 'in', part).execute();
        await store.db.deleteFrom('batch_job').where('id', 'in', part).execute();
      }
    });
  }

  /**
   * Restart hook for the `fail` policy: every queued/running job whose policy is fail becomes failed
   * with error = reason and lease = now; its unfinished targets fail with the same code, and a
   * `batch.failed` event is appended, all in one transaction. Returns the count.
   */
  async markInFlightFailed(reason: string, now: number): Promise<number> {
    return this.transaction(async (store) => {
      const rows = await store.db
        .selectFrom('batch_job')
        .select('id')
        .where('status', 'in', LIVE_STATUSES)
        .where('on_restart', '=', 'fail')
        .execute();
      const ids = rows.map((r) => r.id);
      for (const part of chunks(ids, ID_CHUNK)) {
        await store.db
          .updateTable('batch_target')
          .set({
            status: 'failed',
            code: reason,
            error: 'the server restarted before this target finished',
            hint: 'submit the job again, or use on_restart "resume" or "retry" for jobs that must survive a restart',
            updated_at: now,
          })
          .where('job_id', 'in', part)
          .where('status', 'in', ['pending', 'running'])
          .execute();
        await store.db
          .updateTable('batch_job')
          .set({ status: 'failed', error: reason, lease: now })
          .where('id', 'in', part)
          .execute();
      }
      for (const id of ids) {
        await store.appendEvent(id, 'batch.failed', now, { status: 'failed', error: reason });
      }
      return ids.length;
    });
  }

  /** A caller's jobs, newest first, strictly older than the cursor (createdAt, id). */
  async listBatchJobs(
    caller: string,
    before: { createdAt: number; id: string } | undefined,
    limit: number,
  ): Promise<BatchJob[]> {
    let q = this.db.selectFrom('batch_job').selectAll().where('caller', '=', caller);
    if (before) {
      q = q.where((eb) =>
        eb.or([
          eb('created_at', '<', before.createdAt),
          eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)]),
        ]),
      );
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toJob);
  }

  /** Ids of queued and running jobs, oldest first. */
  async liveJobIds(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('batch_job')
      .select('id')
      .where('status', 'in', LIVE_STATUSES)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => r.id);
  }

  /** Heartbeat: every queued or running job's lease becomes now. Returns how many. */
  async touchLiveJobs(now: number): Promise<number> {
    const r = await this.db
      .updateTable('batch_job')
      .set({ lease: now })
      .where('status', 'in', LIVE_STATUSES)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Pending targets with idx > after, in idx order, for the runner to take. */
  async pendingTargets(
    jobId: string,
    after: number,
    limit: number,
  ): Promise<{ idx: number; url: string; options: string }[]> {
    return this.db
      .selectFrom('batch_target')
      .select(['idx', 'url', 'options'])
      .where('job_id', '=', jobId)
      .where('status', '=', 'pending')
      .where('idx', '>', after)
      .orderBy('idx')
      .limit(limit)
      .execute();
  }

  /**
   * Moves the job's targets in one of `from` back to pending, clearing what they held (the
   * triggers take finished ones out of the counts). Returns how many moved.
   */
  async resetTargets(jobId: string, from: string[], now: number): Promise<number> {
    const r = await this.db
      .updateTable('batch_target')
      .set({ status: 'pending', result: null, error: null, hint: null, code: null, updated_at: now })
      .where('job_id', '=', jobId)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Live jobs with their restart policy, for start-up reconciliation. */
  async liveJobsForRestart(): Promise<{ id: string; status: string; onRestart: string }[]> {
    const rows = await this.db
      .selectFrom('batch_job')
      .select(['id', 'status', 'on_restart'])
      .where('status', 'in', LIVE_STATUSES)
      .orderBy('created_at')
      .execute();
    return rows.map((r) => ({ id: r.id, status: r.status, onRestart: r.on_restart }));
  }

  /** Jobs per status, and the targets live jobs still have to finish. */
  async jobCounts(): Promise<{ byStatus: Record<string, number>; liveTargetsLeft: number }> {
    const rows = await this.db
      .selectFrom('batch_job')
      .select([
        'status',
        sql<number>`count(*)`.as('n'),
        sql<number>`sum(targets_total - targets_done)`.as('left'),
      ])
      .groupBy('status')
      .execute();
    const byStatus: Record<string, number> = {};
    let liveTargetsLeft = 0;
    for (const r of rows) {
      byStatus[r.status] = Number(r.n);
      if ((LIVE_STATUSES as readonly string[]).includes(r.status)) liveTargetsLeft += Number(r.left);
    }
    return { byStatus, liveTargetsLeft };
  }

  async batchNbytes(): Promise<number> {
    const row = await this.db
      .selectFrom('batch_job')
      .select(sql<number>`coalesce(sum(nbytes), 0)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async batchJobCount(): Promise<number> {
    const row = await this.db
      .selectFrom('batch_job')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Appends an event with the job's next sequence number (1, 2, 3… with no gaps); returns the seq. */
  async appendEvent(jobId: string, type: string, at: number, data: object = {}): Promise<number> {
    const row = await this.db
      .insertInto('batch_event')
      .columns(['job_id', 'seq', 'type', 'at', 'data'])
      .expression(
        this.db
          .selectFrom('batch_event')
          .select([
            sql.val(jobId).as('job_id'),
            sql<number>`coalesce(max(seq), 0) + 1`.as('seq'),
            sql.val(type).as('type'),
            sql.val(at).as('at'),
            sql.val(JSON.stringify(data)).as('data'),
          ])
          .where('job_id', '=', jobId),
      )
      .returning('seq')
      .executeTakeFirstOrThrow();
    return row.seq;
  }

  async batchEvents(jobId: string, after: number, limit: number): Promise<BatchEvent[]> {
    const rows = await this.db
      .selectFrom('batch_event')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ jobId: r.job_id, seq: r.seq, type: r.type, at: r.at, data: r.data }));
  }
}
