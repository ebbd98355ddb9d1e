import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. A caller's browser profiles: the storage state (cookies,
// localStorage) a render kept, sealed with SIFT_SECRET_KEY; readable only by its owner.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const big = pg ? sql.raw('BIGINT') : sql.raw('INTEGER');
  await sql`CREATE TABLE browser_profile (
    owner      TEXT NOT NULL,
    name       TEXT NOT NULL,
    state      TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    created_at ${big} NOT NULL,
    updated_at ${big} NOT NULL,
    PRIMARY KEY (owner, name)
  )`.execute(db);
}
