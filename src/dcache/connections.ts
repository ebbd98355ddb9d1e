import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type MigrationProvider,
} from 'kysely';
import { migrations as allMigrations, RENAMED } from '../../migrations';
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
