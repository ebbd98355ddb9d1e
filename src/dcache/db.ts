import { CrawlRepository } from './crawl.repository';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { DeliveryReader, DeliveryRepository } from './delivery.repository';
import { EventReader, EventRepository } from './event.repository';
import { InstanceReader, InstanceRepository } from './instance.repository';
import { JobReader, JobRepository } from './job.repository';
import { noMisses, type BatchStoreMisses } from './rows';
import type { Tables } from './schema';
import { TargetReader } from './target.reader';
import { TargetRepository } from './target.repository';

/** SQLSTATEs after which PostgreSQL asks for the whole transaction again: deadlock, serialization. */
const RETRYABLE = new Set(['40P01', '40001']);
/** Attempts of one transaction before its error is the caller's. */
export const TX_ATTEMPTS = 5;

export interface TxOptions {
  /**
   * What a caller is told of (a submit before its 202, a cancel before its 200, a job's final
   * status) commits with synchronous = FULL on SQLite, so it survives a power cut, not only a
   * killed process; in WAL mode that also makes every earlier commit durable. Other commits stay
   * NORMAL. On PostgreSQL every commit is durable.
   */
  durable?: boolean;
}

/** Every table's reader on one handle: what code that only reads is given. */
export class BatchReader {
  readonly jobs: JobReader;
  readonly targets: TargetReader;
  readonly events: EventReader;
  readonly deliveries: DeliveryReader;
  readonly instances: InstanceReader;

  constructor(
    q: Kysely<Tables>,
    readonly misses: BatchStoreMisses,
  ) {
    this.jobs = new JobReader(q, misses);
    this.targets = new TargetReader(q, misses);
    this.events = new EventReader(q);
    this.deliveries = new DeliveryReader(q);
    this.instances = new InstanceReader(q);
  }
}

/** Only Db.transaction has it, so only Db.transaction opens a Tx. */
const OPENING = Symbol('opening a transaction');

/**
 * The handle of one transaction: its Kysely transaction, every table's repository bound to it, and
 * what runs once it has committed. Writers and lock helpers (see locks.ts, which also gives the
 * one lock order) take a Tx, so the compiler keeps them out of autocommit; only Db.transaction
 * constructs one.
 */
export class Tx {
  readonly jobs: JobRepository;
  readonly targets: TargetRepository;
  readonly events: EventRepository;
  readonly deliveries: DeliveryRepository;
  readonly instances: InstanceRepository;
  readonly crawls: CrawlRepository;

  /** The Kysely transaction: use it, never the Db's handle, until fn returns. */
  readonly q: Kysely<Tables>;
  /** On PostgreSQL (several instances may share the database), else SQLite (one process). */
  readonly pg: boolean;
  private readonly committed: (() => void)[];

  constructor(
    opening: typeof OPENING,
    t: { q: Kysely<Tables>; pg: boolean; misses: BatchStoreMisses; committed: (() => void)[] },
  ) {
    ({ q: this.q, pg: this.pg, committed: this.committed } = t);
    const misses = t.misses;
    if (opening !== OPENING) throw new Error('a Tx is opened by Db.transaction only');
    this.jobs = new JobRepository(this, misses);
    this.targets = new TargetRepository(this, misses);
    this.events = new EventRepository(this);
    this.deliveries = new DeliveryRepository(this);
    this.instances = new InstanceRepository(this);
    this.crawls = new CrawlRepository(this);
  }

  /**
   * Runs fn after this transaction has committed, and never if it rolls back (nor after an attempt
   * that is tried again). Signals belong here, so a change that did not happen is never announced.
   */
  onCommit(fn: () => void): void {
    this.committed.push(fn);
  }
}

/**
 * The database: the Kysely instance, readers on it, and transactions. A transaction is never
 * opened inside another (that would be a second connection on PostgreSQL and a wait for ever on
 * SQLite's one): `transaction` rejects there; pass the Tx down instead.
 */
export class Db {
  readonly pg: boolean;
  readonly read: BatchReader;
  private readonly log = new Logger('store');
  /**
   * The transaction the running code is inside, if any. On Node 20 an AsyncLocalStorage in use
   * has every promise of the process tracked (4–9 % of the main thread's CPU in a batch job), so
   * it is switched off whenever no transaction is open (see `transaction`).
   */
  private readonly current = new AsyncLocalStorage<Tx>();
  /** Transactions begun and not yet ended, attempts and pauses between them included. */
  private open = 0;

  constructor(
    readonly q: Kysely<Tables>,
    readonly misses: BatchStoreMisses = noMisses(),
  ) {
    this.pg = q.getExecutor().adapter instanceof PostgresAdapter;
    this.read = new BatchReader(q, misses);
  }

  /** Whether the calling code runs inside one of this database's transactions. */
  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }

  /**
   * Runs fn in one transaction, so several changes (a status and its event) commit together, then
   * its onCommit callbacks. On PostgreSQL a deadlock or a serialization failure rolls back and
   * runs fn again from the start (at most TX_ATTEMPTS times, after a short random pause): fn must
   * do nothing but database work (no fetch, webhook or timer inside it).
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T>, opts: TxOptions = {}): Promise<T> {
    if (this.inTransaction) {
      throw new Error('transaction() inside a transaction: pass its Tx down instead of opening another');
    }
    this.open++;
    try {
      for (let attempt = 1; ; attempt++) {
        const committed: (() => void)[] = [];
        try {
          const result = await this.attempt(fn, committed, opts.durable === true);
          this.announce(committed);
          return result;
        } catch (err) {
          if (!this.pg || attempt >= TX_ATTEMPTS || !isRetryable(err)) throw err;
          await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
        }
      }
    } finally {
      // The next transaction's run() switches it on again.
      if (--this.open === 0) this.current.disable();
    }
  }

  private attempt<T>(fn: (tx: Tx) => Promise<T>, committed: (() => void)[], durable: boolean): Promise<T> {
    const run = (trx: Kysely<Tables>) => {
      const tx = new Tx(OPENING, { q: trx, pg: this.pg, misses: this.misses, committed });
      return this.current.run(tx, () => fn(tx));
    };
    // PostgreSQL commits durably already (synchronous_commit on).
    if (!durable || this.pg) return this.q.transaction().execute(run);
    // SQLite refuses to change the level inside a transaction: it is set around it, on the
    // connection held for the whole of it.
    return this.q.connection().execute(async (conn) => {
      await sql`PRAGMA synchronous = FULL`.execute(conn);
      try {
        return await conn.transaction().execute(run);
      } finally {
        await sql`PRAGMA synchronous = NORMAL`.execute(conn);
      }
    });
  }

  private announce(committed: (() => void)[]): void {
    for (const f of committed) {
      try {
        f();
      } catch (err) {
        // The change is committed: a failing listener must not make it look undone.
        this.log.error(`after commit: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
  }
}

function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}
