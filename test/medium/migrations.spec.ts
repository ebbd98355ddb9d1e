import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sql, type Kysely, type Migration } from 'kysely';
import { migrate, openSqlite, openDcache } from '../../src/dcache';
import { openPostgres } from '../../src/dcache/postgres';
import { createPgDatabase, describeEachBackend } from '../support/backends';
import { migrations, RENAMED } from '../../migrations';

function tmpFile(name: string): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-')), name);
}

async function tables(db: Kysely<any>): Promise<string[]> {
  const r = await sql<{
    name: string;
  }>`SELECT name FROM sqlite_master WHERE type IN ('table','index') AND name NOT LIKE 'sqlite_%' ORDER BY name`.execute(
    db,
  );
  return r.rows.map((x) => x.name);
}

describe('migrations', () => {
  it('SQLite: the indexes, the on_restart default and the pragmas are set', async () => {
    const d = await openDcache({ path: tmpFile('a.db') });
    const cols = (t: string) =>
      d
        .sqlite!.prepare(`PRAGMA table_info(${t})`)
        .all()
        .map((c: any) => c.name);
    // The columns themselves are checked on both backends below.
    expect(cols('batch_job')).toContain('on_restart');
    const names = await tables(d.kysely);
    for (const t of [
      'batch_job',
      'batch_target',
      'batch_event',
      'clients',
      'cache_body',
      'cache_entry',
      'batch_job_idem',
      'batch_job_lease',
    ]) {
      expect(names).toContain(t);
    }
    const idem = d
      .sqlite!.prepare(`PRAGMA index_info(batch_job_idem)`)
      .all()
      .map((c: any) => c.name);
    expect(idem).toEqual(['caller', 'idem_key']);
    expect(d.sqlite!.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(d.sqlite!.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(d.sqlite!.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(d.sqlite!.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    // SQLite's 2 MB page cache, not the 16 MB better-sqlite3 builds in (bench/batch: 14 MB of peak).
    expect(d.sqlite!.pragma('cache_size', { simple: true })).toBe(-2000);
    const onRestart = d
      .sqlite!.prepare(`PRAGMA table_info(batch_job)`)
      .all()
      .find((c: any) => c.name === 'on_restart') as any;
    expect(onRestart.dflt_value).toBe("'fail'");
    await d.close();
  });

  it('refuses a file that is not a database, naming it, without overwriting it', async () => {
    const file = tmpFile('notes.db');
    fs.writeFileSync(file, 'these are my notes, not a database '.repeat(200));
    const before = fs.readFileSync(file);
    await expect(openDcache({ path: file })).rejects.toThrow(file);
    expect(fs.readFileSync(file)).toEqual(before);
  });
});

describeEachBackend('migrations', (t) => {
  /** An empty database of this backend, not yet migrated. */
  async function empty(): Promise<{
    db: Kysely<any>;
    at: { path: string } | { url: string };
    done: () => Promise<void>;
  }> {
    if (t.backend === 'sqlite') {
      const file = tmpFile('e.db');
      const { db } = openSqlite(file);
      return { db, at: { path: file }, done: () => db.destroy() };
    }
    const pg = await createPgDatabase();
    const { db } = openPostgres(pg.url);
    return {
      db,
      at: { url: pg.url },
      done: async () => {
        await db.destroy();
        await pg.drop();
      },
    };
  }

  it('create every table with the seed columns first, and its indexes', async () => {
    const d = await t.open();
    const all = await d.kysely.introspection.getTables();
    const cols = (name: string) => all.find((x) => x.name === name)!.columns.map((c) => c.name);
    expect(cols('batch_job').slice(0, 11)).toEqual([
      'id',
      'caller',
      'caller_class',
      'idem_key',
      'status',
      'error',
      'targets_total',
      'targets_done',
      'created_at',
      'lease',
      'nbytes',
    ]);
    expect(cols('batch_target').slice(0, 8)).toEqual([
      'job_id',
      'idx',
      'url',
      'options',
      'status',
      'result',
      'error',
      'hint',
    ]);
    for (const name of ['batch_event', 'clients', 'cache_body', 'cache_entry'])
      expect(cols(name).length).toBeGreaterThan(0);
    await d.close();
  });

  it('open, close and reopen: start is idempotent and data stays', async () => {
    const d1 = await t.open({ file: true });
    await d1.batch.createBatchJob({
      id: 'j',
      caller: 'c',
      callerClass: 'fleet',
      idemKey: '',
      status: 'done',
      error: '',
      targetsTotal: 0,
      targetsDone: 0,
      createdAt: 1,
      lease: 1,
      nbytes: 0,
    });
    await d1.close();
    expect(d1.isOpen).toBe(false);
    const d2 = await t.open({ file: true, keep: true });
    expect(await d2.batch.batchJob('j')).toBeDefined();
    const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(d2.kysely);
    expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations));
    await d2.close();
  });

  // SQLite's three starts are three processes (process.spec): in one thread, better-sqlite3's busy
  // wait would block the very connection it waits for.
  if (t.backend === 'postgres')
    it('three starts at once on one new database all come up, and migrate once', async () => {
      const { db, at, done } = await empty();
      const opened = await Promise.all([openDcache(at), openDcache(at), openDcache(at)]);
      for (const d of opened) expect(await d.reader.jobs.batchJobCount()).toBe(0);
      await Promise.all(opened.map((d) => d.close()));
      const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db);
      expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations));
      await done();
    });

  it('a database that applied migrations under their old names migrates on, none applied twice', async () => {
    const { db, done } = await empty();
    const renamed = Object.fromEntries(Object.entries(RENAMED).map(([old, now]) => [now, old]));
    // The same migrations as an earlier build named them.
    await migrate(db, Object.fromEntries(Object.entries(migrations).map(([n, m]) => [renamed[n] ?? n, m])));
    const before = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db);
    expect(before.rows.map((r) => r.name)).toContain('0004-good-citizen');
    expect(await migrate(db)).toEqual([]);
    const after = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db);
    expect(after.rows.map((r) => r.name)).toEqual(Object.keys(migrations));
    await done();
  });

  it('a failing migration leaves no half-applied schema and rejects loudly', async () => {
    const { db, done } = await empty();
    const broken: Record<string, Migration> = {
      ...migrations,
      '0002-broken': {
        up: async (k: Kysely<any>) => {
          await sql`CREATE TABLE half_done (x INTEGER)`.execute(k);
          await sql`THIS IS NOT SQL`.execute(k);
        },
      },
    };
    await expect(migrate(db, broken)).rejects.toThrow(/migration 0002-broken failed/);
    const names = (await db.introspection.getTables()).map((x) => x.name);
    expect(names).not.toContain('half_done');
    expect(names).not.toContain('batch_job'); // 0001 ran in the same transaction, so it is rolled back too
    await done();
  });
});
