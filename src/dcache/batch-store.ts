import { Logger } from '@nestjs/common';
import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { LIVE_JOB_STATUSES } from '../batch/job-status';
import { ID_CHUNK, chunks, noMisses, type BatchStoreMisses } from './batch-rows';
import { InstanceRows } from './instance-rows';
import type { DB } from './schema';

/**
 * The batch job store: jobs, their targets, their events and the instances working on them. Each
 * table's statements live in their own file (job-rows, target-rows, event-rows, instance-rows), stacked into this
 * one class; what spans tables (transactions, sweep, eviction, the restart hook) is here.
 *
 * Accessors are keyed by job id only (the caller filter is the API's). Reads never write; every
 * writer sets the job lease to its `now`. A miss resolves to undefined (or is a no-op for a writer)
 * and is counted; a failure rejects.
 */
export class BatchStore extends InstanceRows {
  private readonly log = new Logger('store');

  constructor(
    db: Kysely<DB>,
    misses: BatchStoreMisses = noMisses(),
    /** Inside a transaction: what runs once it has committed. */
    private readonly committed?: (() => void)[],
  ) {
    super(db, misses);
  }

  /**
   * Runs fn after the transaction this store is bound to has committed, and never if it rolls
   * back; outside a transaction, at once. Signals belong here, so a change that did not happen is
   * never announced.
   */
  onCommit(fn: () => void): void {
    if (this.committed) this.committed.push(fn);
    else fn();
  }

  /**
   * Runs fn with a store bound to one transaction, so several changes (a status and its event)
   * commit together. Inside a transaction already, it joins it.
   *
   * `durable`: what a caller is told of (a submit before its 202, a cancel before its 200, a job's
   * final status) commits with synchronous = FULL, so it survives a power cut, not only a killed
   * process; in WAL mode that also makes every earlier commit durable. Other commits stay NORMAL.
   * SQLite refuses to change the level inside a transaction, so it is set around it, on the
   * connection held for the whole of it. On PostgreSQL every commit is durable.
   */
  async transaction<T>(fn: (store: this) => Promise<T>, opts: { durable?: boolean } = {}): Promise<T> {
    if (this.db.isTransaction) return fn(this);
    const committed: (() => void)[] = [];
    const run = (trx: Kysely<DB>) => fn(new BatchStore(trx, this.misses, committed) as this);
    // PostgreSQL commits durably already (synchronous_commit on).
    const sqlite = this.db.getExecutor().adapter instanceof SqliteAdapter;
    const result =
      !opts.durable || !sqlite
        ? await this.db.transaction().execute(run)
        : await this.db.connection().execute(async (conn) => {
            await sql`PRAGMA synchronous = FULL`.execute(conn);
            try {
              return await conn.transaction().execute(run);
            } finally {
              await sql`PRAGMA synchronous = NORMAL`.execute(conn);
            }
          });
    for (const f of committed) {
      try {
        f();
      } catch (err) {
        // The change is committed: a failing listener must not make it look undone.
        this.log.error(`after commit: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
    return result;
  }

  /**
   * Deletes every job whose lease + ttl <= now, with its targets, events, webhook and deliveries;
   * ttl is the job's own (ttl_s) when it has one, else `ttlSeconds`.
   */
  async sweepBatch(now: number, ttlSeconds: number): Promise<number> {
    return this.transaction(async (store) => {
      const rows = await store.db
        .selectFrom('batch_job')
        .select('id')
        .where(sql<number>`lease + coalesce(ttl_s, ${ttlSeconds})`, '<=', now)
        .execute();
      await store.deleteJobs(rows.map((r) => r.id));
      return rows.length;
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
      let lastLease = Number.MIN_SAFE_INTEGER;
      let lastRowid = -1;
      while (total > maxBytes) {
        const page = await store.db
          .selectFrom('batch_job')
          .select(['id', 'nbytes', 'lease', sql<number>`rowid`.as('rid')])
          .where('status', 'not in', LIVE_JOB_STATUSES)
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

  /** Removes jobs with every row of theirs: targets, events, webhook, deliveries. */
  async deleteJobs(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.transaction(async (store) => {
      for (const part of chunks(ids, ID_CHUNK)) {
        for (const table of JOB_TABLES)
          await store.db.deleteFrom(table).where('job_id', 'in', part).execute();
        await store.db.deleteFrom('batch_job').where('id', 'in', part).execute();
      }
    });
  }

  /**
   * The restart hook of the `fail` policy: every queued/running job whose policy is fail becomes
   * failed with error = reason and lease = now, and its unfinished targets fail with the same code
   * and the message and hint given, in one transaction. Returns the count. (Its events are the
   * lifecycle's, written in the same transaction.)
   */
  async markInFlightFailed(w: FailWrite): Promise<number> {
    return this.transaction(async (store) => {
      const rows = await store.db
        .selectFrom('batch_job')
        .select('id')
        .where('status', 'in', LIVE_JOB_STATUSES)
        .where('on_restart', '=', 'fail')
        .execute();
      const ids = rows.map((r) => r.id);
      for (const part of chunks(ids, ID_CHUNK)) await store.failJobs(part, w);
      return ids.length;
    });
  }

  /** One job failed as markInFlightFailed fails them (the lost-instance hook). */
  failJob(w: FailWrite & { id: string }): Promise<void> {
    return this.transaction((store) => store.failJobs([w.id], w));
  }

  private async failJobs(ids: string[], w: FailWrite): Promise<void> {
    await this.db
      .updateTable('batch_target')
      .set({
        status: 'failed',
        code: w.reason,
        error: w.message,
        hint: w.hint,
        holder: null,
        updated_at: w.now,
      })
      .where('job_id', 'in', ids)
      .where('status', 'in', ['pending', 'running'])
      .execute();
    await this.db
      .updateTable('batch_job')
      .set({ status: 'failed', error: w.reason, lease: w.now })
      .where('id', 'in', ids)
      .execute();
  }

  /**
   * Inside a transaction: waits until no other submit is between its checks and its commit, so the
   * idempotency key and the live-job limits hold exactly when instances submit at once. SQLite has
   * one writer already.
   */
  async lockSubmits(): Promise<void> {
    if (this.pg) await sql`SELECT pg_advisory_xact_lock(${SUBMIT_LOCK})`.execute(this.db);
  }

  /**
   * Inside a transaction: waits for other instances' claims to commit, so the running count per
   * host a claim reads is the one it adds to. A claim is a few statements; SQLite has one writer.
   */
  async lockClaims(): Promise<void> {
    if (this.pg) await sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(this.db);
  }

  /** Inside a transaction: waits for other instances' delivery claims to commit (see claimDeliveries). */
  async lockDeliveries(): Promise<void> {
    if (this.pg) await sql`SELECT pg_advisory_xact_lock(${DELIVERY_LOCK})`.execute(this.db);
  }

  /**
   * Inside a transaction: true when this instance may do the housekeeping named by `key` (sweep,
   * eviction, recovery) now, false while another instance does it. Released at commit.
   */
  async tryHousekeepingLock(key: number): Promise<boolean> {
    if (!this.pg) return true;
    const r = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${key}) AS ok`.execute(this.db);
    return r.rows[0].ok;
  }
}

/** What a job failed by sift itself (restart, lost instance) stores, job and targets. */
interface FailWrite {
  reason: string;
  now: number;
  message: string;
  hint: string;
}

/** Advisory lock keys (PostgreSQL): one per kind of work that must not run twice at once. */
const SUBMIT_LOCK = 0x51f7_0001;
const CLAIM_LOCK = 0x51f7_0004;
const DELIVERY_LOCK = 0x51f7_0005;

/** The tables whose rows belong to one job (by job_id), beside batch_job itself. */
const JOB_TABLES = ['batch_target', 'batch_event', 'batch_webhook', 'batch_delivery'] as const;
export const RECOVERY_LOCK = 0x51f7_0002;
export const SWEEP_LOCK = 0x51f7_0003;
