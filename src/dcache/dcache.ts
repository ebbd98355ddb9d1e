import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { Client } from 'pg';
import { BatchStore } from './batch-store';
import { ContentCache, type ContentCacheStats } from './content-cache';
import { ClientStore } from './client-store';
import { HostStore } from './host-store';
import { migrate, openDatabase, openPostgres, type Backend } from './database';
import { Db, type BatchReader } from './db';
import type { BatchStoreMisses } from './rows';
import type { DB } from './schema';

export const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;

export interface DcacheStats extends ContentCacheStats {
  batchJobs: number;
  batchBytes: number;
  /** Misses per store accessor. */
  storeMisses: BatchStoreMisses;
}

/** The database (one SQLite connection, or a pool on PostgreSQL) and everything stored in it. */
export class Dcache {
  private closed = false;

  constructor(
    readonly backend: Backend,
    /** The SQLite handle; undefined on PostgreSQL. */
    readonly sqlite: Database.Database | undefined,
    readonly db: Kysely<DB>,
    /** Transactions and readers on db. */
    readonly database: Db,
    /** The seed's store, on database. */
    readonly batch: BatchStore,
    readonly cache: ContentCache,
    readonly clients: ClientStore,
    readonly hosts: HostStore,
    /** The PostgreSQL URL (undefined on SQLite). */
    private readonly url?: string,
  ) {}

  /** Every table's reader, for code that only reads. */
  get reader(): BatchReader {
    return this.database.read;
  }

  async stats(): Promise<DcacheStats> {
    return {
      ...this.cache.stats(),
      batchJobs: await this.reader.jobs.batchJobCount(),
      batchBytes: await this.reader.jobs.batchNbytes(),
      storeMisses: { ...this.database.misses },
    };
  }

  /**
   * PostgreSQL: calls fn with the payload of every NOTIFY on `channel`, from any instance, on a
   * connection of its own (reconnected after a loss; what is missed meanwhile, callers poll for).
   * Returns how to stop. SQLite has one process: nothing to listen to.
   */
  async listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>> {
    if (!this.url) return async () => undefined;
    let client: Client | undefined;
    let stopped = false;
    const connect = async (): Promise<void> => {
      const c = new Client({ connectionString: this.url });
      c.on('notification', (m) => m.channel === channel && m.payload !== undefined && fn(m.payload));
      c.on('error', () => {
        if (stopped) return;
        void c.end().catch(() => undefined);
        setTimeout(() => void connect().catch(() => undefined), 1000).unref();
      });
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      client = c;
    };
    await connect();
    return async () => {
      stopped = true;
      await client?.end().catch(() => undefined);
    };
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Nest's last shutdown phase: every module that writes has stopped by then. */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** Closes the connection once; later calls do nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.cache.flushTouches().catch(() => undefined);
    await this.db.destroy();
  }
}

/**
 * Opens the database, applies migrations, and returns the stores: SQLite at `path` (created when
 * needed; ':memory:' works), or PostgreSQL at `url` (postgres://…).
 */
export async function openDcache(
  opts: ({ path: string; url?: undefined } | { url: string; path?: undefined }) & {
    maxBytes?: number;
    /** Called with every SQL statement run (tests read what was committed how). */
    trace?: (sql: string) => void;
    /** PostgreSQL: connections in the pool. */
    poolSize?: number;
  },
): Promise<Dcache> {
  const { backend, sqlite, db } =
    opts.url !== undefined
      ? openPostgres(opts.url, opts.trace, opts.poolSize)
      : openDatabase(opts.path, opts.trace);
  try {
    await migrate(db);
    const cache = new ContentCache(db, opts.maxBytes ?? DEFAULT_CACHE_MAX_BYTES);
    await cache.init();
    const database = new Db(db);
    return new Dcache(
      backend,
      sqlite,
      db,
      database,
      new BatchStore(database),
      cache,
      new ClientStore(db),
      new HostStore(db),
      opts.url,
    );
  } catch (err) {
    await db.destroy();
    throw err;
  }
}
