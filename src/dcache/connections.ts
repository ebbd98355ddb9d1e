import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type MigrationProvider,
} from 'kysely';
import { Client, Pool, types as pgTypes, type ClientConfig, type PoolConfig } from 'pg';
import { migrations as allMigrations, RENAMED } from '../../migrations';
import { DATABASE_ERROR } from '../common/errors';
import type { Tables } from './schema';

/** SQLite runs DDL inside transactions; Kysely's adapter says otherwise, so migrations would not be atomic. */
class TransactionalSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/**
 * Every transaction sift runs writes, so it takes the write lock when it begins (BEGIN IMMEDIATE)
 * and waits for it under the busy timeout. A deferred BEGIN that upgrades later fails at once with
 * "database is locked" when another process (a second sift starting, the CLI) holds it.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class SiftSqliteDialect extends SqliteDialect {
  constructor(private readonly config: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(config);
  }

  override createAdapter(): SqliteAdapter {
    return new TransactionalSqliteAdapter();
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.config);
  }
}

type Statement = ReturnType<Database.Database['prepare']>;

/**
 * Kysely prepares every query anew; the same few statements run for every batch target, so keep the
 * prepared ones. Bounded, and dropped whole when full (the working set is small).
 */
function withStatementCache(sqlite: Database.Database, max = 512) {
  const cache = new Map<string, Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (sqlText: string) => {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        if (cache.size >= max) cache.clear();
        stmt = sqlite.prepare(sqlText);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

export type Backend = 'sqlite' | 'postgres';

export interface Opened {
  backend: Backend;
  db: Kysely<Tables>;
  /** The SQLite handle (undefined on PostgreSQL). */
  sqlite?: Database.Database;
}

/** The page cache in KiB (negative: SQLite reads the number as KiB, not pages). */
export const SQLITE_CACHE_KB = -2000;

/** How long an open, and every statement after it, waits for another connection's lock. */
const SQLITE_BUSY_MS = 5000;

/** Runs step again while SQLite answers SQLITE_BUSY, every 5–25 ms, for at most ms. */
function whileBusy<T>(step: () => T, ms: number): T {
  const deadline = Date.now() + ms;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return step();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
      Atomics.wait(pause, 0, 0, 5 + Math.random() * 20);
    }
  }
}

/** Opens the one connection with the pragmas every part of sift relies on. */
export function openSqlite(file: string, trace?: (sql: string) => void): Opened {
  if (file !== ':memory:') {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
    // The database holds fleet callers' header values and pages fetched from internal addresses:
    // only its owner reads it. SQLite creates the -wal and -shm files with the database's mode.
    if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, 'a', 0o600));
  }
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, trace ? { verbose: (m) => trace(String(m)) } : {});
    // First, so that the pragmas below wait for a process starting beside this one.
    sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_MS}`);
    // Turning a new file to WAL takes its exclusive lock without waiting on busy_timeout: with
    // processes opening one new file together, one in a few thousand got "database is locked".
    whileBusy(() => sqlite.pragma('journal_mode = WAL'), SQLITE_BUSY_MS);
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // better-sqlite3 builds SQLite with a 16 MB page cache; SQLite's own default of 2 MB serves
    // sift's reads by key as well (the file stays in the OS cache) and keeps 14 MB out of a job's
    // peak memory.
    sqlite.pragma(`cache_size = ${SQLITE_CACHE_KB}`);
    // Reading the schema proves the file is a database before anything is written to it.
    sqlite.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    throw new Error(`cannot open database ${file}: ${(err as Error).message}`);
  }
  const db = new Kysely<Tables>({ dialect: new SiftSqliteDialect({ database: withStatementCache(sqlite) }) });
  return { backend: 'sqlite', sqlite, db };
}

/** 64-bit integers and sums come back as numbers: sift's are unix seconds, byte and row counts. */
const asNumber = (v: string) => Number(v);
const INT8 = 20;
const NUMERIC = 1700;

/** How long sift waits on PostgreSQL, and what the server is told to bound on its side. */
export interface PgLimits {
  /**
   * A connection must be made, and every statement answered, within this; the server also cancels
   * a statement, a lock wait or an idle open transaction that takes longer.
   */
  timeoutMs: number;
  /**
   * No statement or lock limit on the server: migrations (an index on a large table takes its time,
   * and instances starting together wait for each other's migration lock).
   */
  unboundedStatements?: boolean;
}

export const DEFAULT_PG_LIMITS: PgLimits = { timeoutMs: 5000 };

/**
 * A client that prepares each statement once per connection (named by its text's hash): the same
 * few statements run for every batch target, and planning them anew is most of their cost. The
 * set of texts is small (Kysely's, with values as parameters).
 *
 * It also never takes the process down and never waits for ever: it listens for its own errors
 * for its whole life (pg emits them on a client the pool has handed out, where nobody else
 * listens), and a statement unanswered after `timeoutMs` destroys the connection, so the query
 * fails, the pool drops the client, and a silent network (no reset) is noticed.
 */
class PreparingClient extends Client {
  private readonly answerMs: number;

  constructor(config: ClientConfig & { answerMs: number }) {
    super(config);
    this.answerMs = config.answerMs;
    this.on('error', () => undefined);
  }

  override query(...args: unknown[]): any {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && args.length === 2) {
      const name = `s${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
      return this.bounded(super.query({ name, text, values }) as Promise<unknown>);
    }
    const r = (super.query as (...a: unknown[]) => unknown)(...args);
    return r instanceof Promise ? this.bounded(r) : r;
  }

  private bounded<T>(p: Promise<T>): Promise<T> {
    const timer = setTimeout(() => {
      const conn = (this as unknown as { connection?: { stream?: { destroy(e: Error): void } } }).connection;
      conn?.stream?.destroy(new Error(`PostgreSQL did not answer within ${this.answerMs} ms`));
    }, this.answerMs);
    timer.unref();
    return p.then(
      (r) => {
        clearTimeout(timer);
        return r;
      },
      (err: unknown) => {
        clearTimeout(timer);
        throw markDatabaseError(err);
      },
    );
  }
}

/**
 * Marks an error as the database's (see isStorageUnavailable): only such an error may be taken for
 * the database being away. A fetch's ECONNRESET is the page's, never the database's.
 */
function markDatabaseError(err: unknown): unknown {
  if (err && typeof err === 'object') (err as Record<symbol, boolean>)[DATABASE_ERROR] = true;
  return err;
}

/** pg's connection settings for sift's limits: every connection, pooled or listening, gets them. */
export function pgClientConfig(url: string, limits: PgLimits = DEFAULT_PG_LIMITS): ClientConfig {
  const t = limits.timeoutMs;
  return {
    connectionString: url,
    connectionTimeoutMillis: t,
    // The server's side of a lost client: keepalive probes find a peer that is gone, and a
    // transaction left open (its client stalled) is ended with its locks, so other instances go on.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    statement_timeout: limits.unboundedStatements ? undefined : t,
    lock_timeout: limits.unboundedStatements ? undefined : Math.max(100, Math.floor(t / 2)),
    idle_in_transaction_session_timeout: t,
    options: '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3',
  };
}

/** A small pool on one PostgreSQL database (`postgres://…`). */
export function openPostgres(
  url: string,
  trace?: (sql: string) => void,
  max = 8,
  limits: PgLimits = DEFAULT_PG_LIMITS,
): Opened {
  const pool = new Pool({
    ...pgClientConfig(url, limits),
    max,
    Client: PreparingClient,
    // A statement's answer may take up to the server's statement_timeout; past that and a margin,
    // the connection is taken for dead.
    answerMs: limits.unboundedStatements ? 24 * 3600_000 : limits.timeoutMs + 1000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 || oid === NUMERIC
          ? asNumber
          : pgTypes.getTypeParser(oid, format)) as typeof pgTypes.getTypeParser,
    },
  } as unknown as PoolConfig);
  // An idle client that loses its server must not take the process down with it.
  pool.on('error', () => undefined);
  // A connection that cannot be made (refused, timed out) fails the request as the database's.
  const connect = pool.connect.bind(pool) as () => Promise<unknown>;
  (pool as unknown as { connect: () => Promise<unknown> }).connect = () =>
    connect().catch((err: unknown) => {
      throw markDatabaseError(err);
    });
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool }),
    log: trace
      ? (e) => {
          if (e.level === 'query') trace(e.query.sql);
        }
      : undefined,
  });
  return { backend: 'postgres', db };
}

class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly migrations: Record<string, Migration>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations;
  }
}

/** Applies every pending migration in one transaction; any failure rolls all of them back and rejects. */
export async function migrate(db: Kysely<any>, migrations: Record<string, Migration> = allMigrations) {
  await renameApplied(db);
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider(migrations) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed ?? '(unknown)'} failed: ${reason}`);
  }
  return results ?? [];
}

/** Rows of migrations applied under an old name (see RENAMED) take the new one. */
async function renameApplied(db: Kysely<any>): Promise<void> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === 'kysely_migration')) return;
  for (const [old, now] of Object.entries(RENAMED)) {
    await db.updateTable('kysely_migration').set({ name: now }).where('name', '=', old).execute();
  }
}
