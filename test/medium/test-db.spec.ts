import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, sql, type Kysely } from 'kysely';
import type { Dcache } from '../../src/dcache';
import { TestDb } from '../support/backends';

/** Every base table of the schema, read here on its own (not through the helper under test). */
async function schemaTables(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
    ORDER BY table_name`.execute(db);
  return rows.map((r) => r.table_name);
}

async function rowCounts(db: Kysely<any>, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(t)}`.execute(db);
    out[t] = rows[0].n;
  }
  return out;
}

/** A value of each column type the schema uses; the same value everywhere, so foreign keys match. */
function sample(type: string, where: string): unknown {
  if (/^(text|character varying|character)$/.test(type)) return 'x';
  if (/^(smallint|integer|bigint|numeric|real|double precision)$/.test(type)) return 1;
  if (type === 'boolean') return true;
  if (type === 'bytea') return Buffer.from('x');
  if (/^jsonb?$/.test(type)) return '{}';
  if (/^(timestamp|date)/.test(type)) return new Date();
  if (type === 'tsvector') return "'x':1";
  throw new Error(`no sample value for ${where} of type ${type}: add one here`);
}

/**
 * Writes one row in each table, every column without a default (and not generated) given a sample value. A table whose
 * foreign key points at one not written yet is tried again after the others.
 */
async function writeRowInEach(db: Kysely<any>, tables: string[]): Promise<void> {
  let left = [...tables];
  while (left.length > 0) {
    const later: string[] = [];
    const errors: string[] = [];
    for (const t of left) {
      const { rows } = await sql<{ column_name: string; data_type: string }>`
        SELECT column_name, data_type FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ${t} AND column_default IS NULL
          AND is_generated = 'NEVER'`.execute(db);
      const row = Object.fromEntries(
        rows.map((c) => [c.column_name, sample(c.data_type, `${t}.${c.column_name}`)]),
      );
      try {
        await db.insertInto(t).values(row).execute();
      } catch (err) {
        if ((err as { code?: string }).code !== '23503') throw err; // foreign_key_violation
        later.push(t);
        errors.push(`${t}: ${(err as Error).message}`);
      }
    }
    if (later.length === left.length) throw new Error(`no row could be written in:\n${errors.join('\n')}`);
    left = later;
  }
}

describe('TestDb on PostgreSQL: every test starts from empty tables', () => {
  const db = new TestDb('postgres');
  let d: Dcache | undefined;
  beforeAll(() => db.setUp());
  afterEach(async () => {
    await d?.close();
    d = undefined;
  });
  afterAll(() => db.tearDown());

  it('an open empties every table of the schema, one a migration adds later too; the migrations stay recorded', async () => {
    d = await db.open();
    // A table the migrations do not know yet: the list of what to empty must come from the schema.
    await sql`CREATE TABLE added_later (id TEXT PRIMARY KEY, n INTEGER NOT NULL)`.execute(d.kysely);
    const bookkeeping = [DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE];
    const tables = (await schemaTables(d.kysely)).filter((t) => !bookkeeping.includes(t));
    expect(tables).toEqual(
      expect.arrayContaining([
        'added_later',
        'batch_delivery',
        'batch_event',
        'batch_job',
        'batch_target',
        'batch_webhook',
        'cache_body',
        'cache_entry',
        'clients',
        'host_state',
        'robots_txt',
        'sift_instance',
      ]),
    );
    const migrated = await rowCounts(d.kysely, bookkeeping);
    await writeRowInEach(d.kysely, tables);
    const written = await rowCounts(d.kysely, tables);
    expect(Object.entries(written).filter(([, n]) => n === 0)).toEqual([]);
    await d.close();
    d = undefined;

    d = await db.open();
    expect(await rowCounts(d.kysely, tables)).toEqual(Object.fromEntries(tables.map((t) => [t, 0])));
    // The migrator's own rows are not the test's data: the schema is still known as migrated.
    expect(await rowCounts(d.kysely, bookkeeping)).toEqual(migrated);
    await sql`DROP TABLE added_later`.execute(d.kysely);
  });

  it('an open with keep finds what the one before it wrote', async () => {
    d = await db.open();
    await d.hosts.pauseHost('example.test', 1234);
    await d.close();
    d = undefined;
    d = await db.open({ keep: true });
    expect(await d.hosts.pausedUntil('example.test')).toBe(1234);
  });
});
