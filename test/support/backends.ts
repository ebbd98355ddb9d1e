import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, sql, type Kysely } from 'kysely';
import { Client } from 'pg';
import { openDcache, type Dcache } from '../../src/dcache';

export type Backend = 'sqlite' | 'postgres';
export const BACKENDS: Backend[] = ['sqlite', 'postgres'];

/** The PostgreSQL server the tests use (see pg-server.ts: started for them when none answers). */
export const pgServerUrl = () => process.env.SIFT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A database of its own on the test server, and how to drop it. */
export async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sift_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: pgServerUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(pgServerUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: pgServerUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Empties every table of the database's schema but the migrator's own two (which say the schema is
 * there), in one statement. The list is read from the schema, so a table a migration adds later is
 * emptied too. Returns the tables it emptied.
 */
export async function emptyPgTables(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ tablename: string }>`
    SELECT tablename FROM pg_tables
    WHERE schemaname = current_schema()
      AND tablename NOT IN (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE})
    ORDER BY tablename`.execute(db);
  const tables = rows.map((r) => r.tablename);
  if (tables.length > 0) {
    await sql`TRUNCATE ${sql.join(tables.map((t) => sql.table(t)))} RESTART IDENTITY`.execute(db);
  }
  return tables;
}

/**
 * One backend for a suite. SQLite: a new in-memory database per open (or a file, to be opened
 * again). PostgreSQL: one database for the suite, created before it and dropped after, every table
 * emptied at each open that does not keep it (emptyPgTables).
 */
export class TestDb {
  private pg?: { url: string; drop: () => Promise<void> };
  private file?: string;

  constructor(readonly backend: Backend) {}

  async setUp(): Promise<void> {
    if (this.backend === 'postgres') this.pg = await createPgDatabase();
  }

  async tearDown(): Promise<void> {
    await this.pg?.drop();
  }

  get url(): string {
    if (!this.pg) throw new Error('no PostgreSQL database: setUp() first');
    return this.pg.url;
  }

  /**
   * An empty store; `file` makes SQLite's a file, and `keep` opens the same store again as a
   * restarted process finds it.
   */
  async open(
    opts: {
      maxBytes?: number;
      trace?: (sql: string) => void;
      file?: boolean;
      keep?: boolean;
      /** PostgreSQL: its statement and lock timeouts (see PgLimits); sift's default otherwise. */
      timeoutMs?: number;
    } = {},
  ): Promise<Dcache> {
    const { maxBytes, trace, timeoutMs } = opts;
    if (this.backend === 'sqlite') {
      if (!opts.file) return openDcache({ path: ':memory:', maxBytes, trace });
      if (!opts.keep || !this.file) {
        this.file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-db-')), 'sift.db');
      }
      return openDcache({ path: this.file, maxBytes, trace });
    }
    if (!opts.keep) {
      const d = await openDcache({ url: this.url });
      try {
        await emptyPgTables(d.kysely);
      } finally {
        await d.close();
      }
    }
    return openDcache({ url: this.url, maxBytes, trace, timeoutMs });
  }
}

/** Declares the suite once per backend, each with its own TestDb. */
export function describeEachBackend(name: string, body: (db: TestDb) => void): void {
  describe.each(BACKENDS)(`${name} on %s`, (backend) => {
    const db = new TestDb(backend);
    beforeAll(() => db.setUp());
    afterAll(() => db.tearDown());
    body(db);
  });
}
