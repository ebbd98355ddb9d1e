import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. A caller's history of each page it asked changes of (one row a
// version: the latest keeps its markdown, older ones their digest and times; each row the fetch
// that last read it and what that fetch was told), and monitors: pages
// or a crawl read again on a schedule, each run a job of its own (batch_job.monitor_id).
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const big = pg ? sql.raw('BIGINT') : sql.raw('INTEGER');
  await sql`CREATE TABLE page_version (
    owner     TEXT NOT NULL,
    page      TEXT NOT NULL,
    at        ${big} NOT NULL,
    seen_at   ${big} NOT NULL,
    digest    TEXT NOT NULL,
    gone      INTEGER NOT NULL,
    markdown  TEXT NOT NULL,
    by_fetch  TEXT NOT NULL,
    changes   TEXT NOT NULL,
    PRIMARY KEY (owner, page, at)
  )`.execute(db);
  await sql`CREATE INDEX page_version_seen ON page_version (seen_at)`.execute(db);
  await sql`CREATE TABLE monitor (
    id           TEXT PRIMARY KEY,
    caller       TEXT NOT NULL,
    caller_class TEXT NOT NULL,
    name         TEXT NOT NULL,
    request      TEXT NOT NULL,
    schedule     TEXT NOT NULL,
    every_s      INTEGER NOT NULL,
    webhook      TEXT,
    notify       TEXT NOT NULL,
    paused       INTEGER NOT NULL,
    next_at      ${big} NOT NULL,
    runs         INTEGER NOT NULL,
    last_run_id  TEXT,
    last_run_at  ${big},
    last_error   TEXT,
    created_at   ${big} NOT NULL,
    updated_at   ${big} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX monitor_due ON monitor (paused, next_at)`.execute(db);
  await sql`CREATE INDEX monitor_caller ON monitor (caller, caller_class, created_at)`.execute(db);
  await sql`ALTER TABLE batch_job ADD COLUMN monitor_id TEXT`.execute(db);
  await sql`CREATE INDEX batch_job_monitor ON batch_job (monitor_id, created_at)`.execute(db);
}
