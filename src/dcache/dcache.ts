import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Client } from 'pg';
import { BatchStore } from './batch-store';
import { ContentCache, type ContentCacheStats } from './content-cache';
import { ClientStore } from './client-store';
import { ProfileStore } from './profile-store';
import { HistoryStore } from './history-store';
import { SearchStore } from './search-store';
import { MonitorStore } from './monitor-store';
import { HostStore } from './host-store';
import { DEFAULT_PG_LIMITS, migrate, openSqlite, type Backend, type PgLimits } from './connections';
import { Db, type BatchReader } from './db';
import type { BatchStoreMisses } from './rows';
import type { Tables } from './schema';

/** pg and sift's connections through it, loaded only for a PostgreSQL database. */
const postgres = () => require('./postgres') as typeof import('./postgres');

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
  /** Whether the database answered the last look (the instance's heartbeat, on PostgreSQL). */
  private up = true;

  readonly backend: Backend;
  /** The SQLite handle; undefined on PostgreSQL. */
  readonly sqlite: Database.Database | undefined;
  /** The query builder on the connection(s): for what has no reader or Tx of its own. */
  readonly kysely: Kysely<Tables>;
  /** The database handle: transactions (Tx) and readers, on kysely. */
  readonly db: Db;
  /** The seed's store, on db. */
  readonly batch: BatchStore;
  readonly cache: ContentCache;
  readonly clients: ClientStore;
  readonly hosts: HostStore;
  readonly profiles: ProfileStore;
  readonly history: HistoryStore;
  readonly search: SearchStore;
  readonly monitors: MonitorStore;
  /** The PostgreSQL URL (undefined on SQLite). */
  private readonly url?: string;
  private readonly limits: PgLimits;

  constructor(parts: {
    backend: Backend;
    sqlite: Database.Database | undefined;
    kysely: Kysely<Tables>;
    url?: string;
    limits?: PgLimits;
    cache: ContentCache;
  }) {
    ({
      backend: this.backend,
      sqlite: this.sqlite,
      kysely: this.kysely,
      url: this.url,
      cache: this.cache,
    } = parts);
    this.limits = parts.limits ?? DEFAULT_PG_LIMITS;
    this.db = new Db(this.kysely);
    this.batch = new BatchStore(this.db);
    this.clients = new ClientStore(this.kysely);
    this.hosts = new HostStore(this.kysely);
    this.profiles = new ProfileStore(this.kysely);
    this.history = new HistoryStore(this.db);
    this.search = new SearchStore(this.db);
    this.monitors = new MonitorStore(this.kysely);
  }

  /** Every table's reader, for code that only reads. */
  get reader(): BatchReader {
    return this.db.read;
  }

  async stats(): Promise<DcacheStats> {
    return {
      ...this.cache.stats(),
      batchJobs: await this.reader.jobs.batchJobCount(),
      batchBytes: await this.reader.jobs.batchNbytes(),
      storeMisses: { ...this.db.misses },
    };
  }

  /**
   * PostgreSQL: calls fn with the payload of every NOTIFY on `channel`, from any instance, on a
   * connection of its own. A lost connection is made again, with backoff (up to 5 s between
   * tries), for as long as the process lives; what is missed meanwhile, callers poll for.
   * Returns how to stop. SQLite has one process: nothing to listen to.
   */
  async listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>> {
    const url = this.url;
    if (!url) return async () => undefined;
    let client: Client | undefined;
    let stopped = false;
    let retry: NodeJS.Timeout | undefined;
    let delay = 250;
    const again = () => {
      if (stopped || retry) return;
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, delay);
      retry.unref();
      delay = Math.min(delay * 2, 5000);
    };
    const connect = async (): Promise<void> => {
      const c = postgres().pgClient(url, this.limits);
      let lost = false;
      const onLost = () => {
        if (lost) return;
        lost = true;
        if (client === c) client = undefined;
        void c.end().catch(() => undefined);
        again();
      };
      c.on('error', onLost);
      c.on('end', onLost);
      c.on('notification', (m) => m.channel === channel && m.payload !== undefined && fn(m.payload));
      try {
        await c.connect();
        await c.query(`LISTEN ${channel}`);
      } catch {
        return onLost();
      }
      if (stopped || lost) return void c.end().catch(() => undefined);
      client = c;
      delay = 250;
    };
    await connect();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    };
  }

  get reachable(): boolean {
    return this.up;
  }

  /** What the last look at the database found: it answered, or it could not be reached. */
  markReachable(up: boolean): void {
    this.up = up;
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
    await this.kysely.destroy();
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
    /** PostgreSQL: how long to wait for connections and answers (see PgLimits). */
    timeoutMs?: number;
    /** PostgreSQL: how long to wait for the server to answer at all before giving up (s). */
    waitS?: number;
    /** Told of each failed try while waiting. */
    log?: (message: string) => void;
  },
): Promise<Dcache> {
  const limits = { ...DEFAULT_PG_LIMITS, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) };
  if (opts.url !== undefined) {
    await waitForPostgres(opts.url, limits, opts.waitS ?? 0, opts.log);
    // Migrations on a connection of their own, without the statement and lock limits.
    const { db: mdb } = postgres().openPostgres(opts.url, opts.trace, 1, {
      ...limits,
      unboundedStatements: true,
    });
    try {
      await migrate(mdb);
    } finally {
      await mdb.destroy();
    }
  }
  const { backend, sqlite, db } =
    opts.url !== undefined
      ? postgres().openPostgres(opts.url, opts.trace, opts.poolSize, limits)
      : openSqlite(opts.path, opts.trace);
  try {
    if (backend === 'sqlite') await migrate(db);
    const cache = new ContentCache(db, opts.maxBytes ?? DEFAULT_CACHE_MAX_BYTES);
    await cache.init();
    return new Dcache({ backend, sqlite, kysely: db, url: opts.url, limits, cache });
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

/** host:port/db of a PostgreSQL URL: what messages name (never the user's password). */
export function pgTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname || '/'}`;
  } catch {
    return '(an unparsable URL)';
  }
}

/**
 * Tries to reach PostgreSQL until it answers, for up to `waitS` seconds (a database starting
 * beside sift, a restart under way): each failed try is logged, and giving up rejects with the
 * same words.
 */
export async function waitForPostgres(
  url: string,
  limits: PgLimits,
  waitS: number,
  log: (message: string) => void = () => undefined,
): Promise<void> {
  const deadline = Date.now() + waitS * 1000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 2000)) {
    const c = postgres().pgClient(url, limits);
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query('SELECT 1');
      return;
    } catch (err) {
      const message = `waiting for PostgreSQL at ${pgTarget(url)}: ${reasonOf(err)}`;
      if (Date.now() + delay > deadline) throw new Error(message);
      log(message);
      await new Promise((r) => setTimeout(r, delay));
    } finally {
      await c.end().catch(() => undefined);
    }
  }
}

function reasonOf(err: unknown): string {
  const e = err as { message?: string; code?: string; errors?: { message?: string }[] };
  // A name that resolves to several addresses fails with an AggregateError of each try.
  const msg = e?.message || e?.errors?.map((x) => x.message).join('; ') || e?.code || String(err);
  return msg.replace(/postgres(ql)?:\/\/[^\s]*/g, (u) => pgTarget(u));
}
