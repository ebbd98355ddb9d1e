import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import {
  DEFAULT_RESTART_POLICY,
  LIVE_JOB_STATUSES,
  REPLAYABLE_JOB_STATUSES,
  UNFINISHED_TARGET_STATUSES,
  isLiveJob,
  type JobStatus,
  type RestartPolicy,
} from '../common/job-status';
import type { Tx } from './db';
import { toJob, type BatchJob, type BatchStoreMisses } from './rows';
import type { Tables } from './schema';

/**
 * A caller in a query: its name and class, both matched. A bare name is the seed's surface
 * (BatchStore), which knows callers by name only.
 */
export type CallerRef = string | { name: string; callerClass: string };

/** One key for a caller, `class:name`: the same caller in every per-caller count and bucket. */
export function callerKeyOf(c: { name: string; callerClass: string }): string {
  return `${c.callerClass}:${c.name}`;
}

/** The jobs of `caller` only: both name and class match (see CallerRef). */
function ofCaller<O>(
  q: SelectQueryBuilder<Tables, 'batch_job', O>,
  caller: CallerRef,
): SelectQueryBuilder<Tables, 'batch_job', O> {
  if (typeof caller === 'string') return q.where('caller', '=', caller);
  return q.where('caller', '=', caller.name).where('caller_class', '=', caller.callerClass);
}

/** Reads of the batch_job table: one row per job, its status, counts, lease and stored bytes. */
export class JobReader {
  constructor(
    protected readonly q: Kysely<Tables>,
    protected readonly misses: BatchStoreMisses,
  ) {}

  async batchJob(id: string): Promise<BatchJob | undefined> {
    const row = await this.q.selectFrom('batch_job').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) {
      this.misses.batchJob++;
      return undefined;
    }
    return toJob(row);
  }

  async batchJobByIdem(
    caller: CallerRef,
    idemKey: string,
    now: number,
    ttlSeconds: number,
  ): Promise<string | undefined> {
    const row = await ofCaller(this.q.selectFrom('batch_job').select('id'), caller)
      .where('idem_key', '=', idemKey)
      .where(sql<number>`lease + ${ttlSeconds}`, '>', now)
      .where('status', 'in', REPLAYABLE_JOB_STATUSES)
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

  /** A monitor's `notify` (changed or always), for its run's end; undefined once it is deleted. */
  async monitorNotify(id: string): Promise<string | undefined> {
    const r = await this.q.selectFrom('monitor').select('notify').where('id', '=', id).executeTakeFirst();
    return r?.notify;
  }

  async liveBatchJobs(caller: CallerRef): Promise<number> {
    const row = await ofCaller(
      this.q.selectFrom('batch_job').select((eb) => eb.fn.countAll<number>().as('n')),
      caller,
    )
      .where('status', 'in', LIVE_JOB_STATUSES)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async liveBatchJobsTotal(): Promise<number> {
    const row = await this.q
      .selectFrom('batch_job')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'in', LIVE_JOB_STATUSES)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * A caller's jobs, newest first, strictly older than the cursor (createdAt, id); only those in
   * `statuses` when given.
   */
  async listBatchJobs(
    caller: CallerRef,
    before: { createdAt: number; id: string } | undefined,
    limit: number,
    statuses?: readonly JobStatus[],
  ): Promise<BatchJob[]> {
    let q = ofCaller(this.q.selectFrom('batch_job').selectAll(), caller);
    if (statuses !== undefined)
      q = q.where('status', 'in', statuses.length > 0 ? statuses : ['-' as JobStatus]);
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

  /** Live jobs with their restart policy, oldest first: what the runner takes up after a start. */
  async liveJobs(): Promise<{ id: string; status: JobStatus; onRestart: RestartPolicy }[]> {
    const rows = await this.q
      .selectFrom('batch_job')
      .select(['id', 'status', 'on_restart'])
      .where('status', 'in', LIVE_JOB_STATUSES)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, status: r.status, onRestart: r.on_restart }));
  }

  /**
   * Cancelled jobs that still have targets not finished: a cancel whose process ended before it
   * had ended them all (see JobLifecycle.cancel). At most `limit`.
   */
  async cancelledUnfinished(limit: number): Promise<string[]> {
    const rows = await this.q
      .selectFrom('batch_job')
      .select('id')
      .where('status', '=', 'cancelled')
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('batch_target')
            .select('batch_target.idx')
            .whereRef('batch_target.job_id', '=', 'batch_job.id')
            .where('batch_target.status', 'in', UNFINISHED_TARGET_STATUSES),
        ),
      )
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Jobs per status, and the targets live jobs still have to finish. */
  async jobCounts(): Promise<{ byStatus: Partial<Record<JobStatus, number>>; liveTargetsLeft: number }> {
    const rows = await this.q
      .selectFrom('batch_job')
      .select([
        'status',
        sql<number>`count(*)`.as('n'),
        sql<number>`sum(targets_total - targets_done)`.as('left'),
      ])
      .groupBy('status')
      .execute();
    const byStatus: Partial<Record<JobStatus, number>> = {};
    let liveTargetsLeft = 0;
    for (const r of rows) {
      byStatus[r.status] = Number(r.n);
      if (isLiveJob(r.status)) liveTargetsLeft += Number(r.left);
    }
    return { byStatus, liveTargetsLeft };
  }

  async batchNbytes(): Promise<number> {
    const row = await this.q
      .selectFrom('batch_job')
      .select(sql<number>`coalesce(sum(nbytes), 0)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** What the batch byte budget counts: every job's results and its other rows (row_bytes). */
  async batchBytes(): Promise<number> {
    const row = await this.q
      .selectFrom('batch_job')
      .select(sql<number>`coalesce(sum(nbytes + row_bytes), 0)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The bytes the budget counts per caller with stored jobs, live ones included. */
  async bytesByCaller(): Promise<{ caller: string; callerClass: string; bytes: number }[]> {
    const rows = await this.q
      .selectFrom('batch_job')
      .select(['caller', 'caller_class', sql<number>`sum(nbytes + row_bytes)`.as('bytes')])
      .groupBy(['caller', 'caller_class'])
      .execute();
    return rows.map((r) => ({ caller: r.caller, callerClass: r.caller_class, bytes: Number(r.bytes) }));
  }

  async batchJobCount(): Promise<number> {
    const row = await this.q
      .selectFrom('batch_job')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

/** The writers of batch_job, inside a transaction. */
export class JobRepository extends JobReader {
  private readonly pg: boolean;

  constructor(tx: Tx, misses: BatchStoreMisses) {
    super(tx.q, misses);
    this.pg = tx.pg;
  }

  /**
   * The job, its row taken for the rest of the transaction on PostgreSQL (lockJob and the read in
   * one statement). Undefined when it does not exist.
   */
  async lockedBatchJob(id: string): Promise<BatchJob | undefined> {
    let q = this.q.selectFrom('batch_job').selectAll().where('id', '=', id);
    if (this.pg) q = q.forUpdate();
    const row = await q.executeTakeFirst();
    return row && toJob(row);
  }

  /** `rowBytes`: what the job's rows beside its results hold, counted by the byte budget. */
  async createBatchJob(j: BatchJob, rowBytes = 0): Promise<void> {
    await this.q
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
        on_restart: j.onRestart ?? DEFAULT_RESTART_POLICY,
        fingerprint: j.fingerprint ?? '',
        targets_failed: j.targetsFailed ?? 0,
        ttl_s: j.ttlS ?? null,
        parent_id: j.parentId ?? null,
        row_bytes: rowBytes,
        kind: j.kind ?? 'batch',
        crawl: j.crawl ?? null,
        monitor_id: j.monitorId ?? null,
      })
      .execute();
  }

  async setBatchJobStatus(w: { id: string; status: JobStatus; now: number; error?: string }): Promise<void> {
    const r = await this.q
      .updateTable('batch_job')
      .set({ status: w.status, error: w.error ?? '', lease: w.now })
      .where('id', '=', w.id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) this.misses.setBatchJobStatus++;
  }

  /** queued → running, only if it is queued still: true for the one writer that moved it. */
  async startBatchJob(id: string, now: number): Promise<boolean> {
    const r = await this.q
      .updateTable('batch_job')
      .set({ status: 'running', lease: now })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async touchBatchJob(id: string, now: number): Promise<void> {
    const r = await this.q
      .updateTable('batch_job')
      .set({ lease: now })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) this.misses.touchBatchJob++;
  }

  /** Heartbeat: every queued or running job's lease becomes now. Returns how many. */
  async touchLiveJobs(now: number): Promise<number> {
    const r = await this.q
      .updateTable('batch_job')
      .set({ lease: now })
      .where('status', 'in', LIVE_JOB_STATUSES)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
}
