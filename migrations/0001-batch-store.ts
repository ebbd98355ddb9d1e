import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only, never app code. The seed's two tables and two indexes, column for
// column, plus what the service around them needs. One file for both databases: where SQLite and
// PostgreSQL differ (types, triggers), the PostgreSQL statement stands beside the SQLite one.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  // Unix seconds and byte counts: 64-bit on PostgreSQL (SQLite's INTEGER is already).
  const big = pg ? sql.raw('BIGINT') : sql.raw('INTEGER');
  await sql`CREATE TABLE batch_job (
    id            TEXT PRIMARY KEY,
    caller        TEXT NOT NULL,
    caller_class  TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    status        TEXT NOT NULL,
    error         TEXT NOT NULL DEFAULT '',
    targets_total INTEGER NOT NULL,
    targets_done  INTEGER NOT NULL DEFAULT 0,
    created_at    ${big} NOT NULL,
    lease         ${big} NOT NULL,
    nbytes        ${big} NOT NULL DEFAULT 0,
    on_restart    TEXT NOT NULL DEFAULT 'fail',
    fingerprint   TEXT NOT NULL DEFAULT '',
    targets_failed INTEGER NOT NULL DEFAULT 0
  )`.execute(db);
  // SQLite's implicit rowid orders jobs of the same second by insertion; PostgreSQL gets a column.
  if (pg) await sql`ALTER TABLE batch_job ADD COLUMN rowid BIGSERIAL`.execute(db);
  await sql`CREATE TABLE batch_target (
    job_id  TEXT NOT NULL,
    idx     INTEGER NOT NULL,
    url     TEXT NOT NULL,
    options TEXT NOT NULL,
    status  TEXT NOT NULL,
    result  TEXT,
    error   TEXT,
    hint    TEXT,
    code    TEXT,
    updated_at ${big},
    PRIMARY KEY (job_id, idx)
  )`.execute(db);
  // The job's counters follow its targets inside the database, so they hold for every writer and
  // every crash: targets_done/targets_failed count finished targets, nbytes sums the UTF-8 bytes of
  // the stored results (a TEXT cast to BLOB has its UTF-8 length). Every UPDATE of a target sets
  // updated_at to its now, which becomes the job's lease.
  if (pg) await pgCountTriggers(db);
  else {
    await sql`CREATE TRIGGER batch_target_counts_insert AFTER INSERT ON batch_target
      WHEN NEW.status IN ('done', 'failed') OR NEW.result IS NOT NULL
      BEGIN
        UPDATE batch_job SET
          targets_done = targets_done + (NEW.status IN ('done', 'failed')),
          targets_failed = targets_failed + (NEW.status = 'failed'),
          nbytes = nbytes + coalesce(length(CAST(NEW.result AS BLOB)), 0)
        WHERE id = NEW.job_id;
      END`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at ON batch_target
      BEGIN
        UPDATE batch_job SET
          targets_done = targets_done + (NEW.status IN ('done', 'failed')) - (OLD.status IN ('done', 'failed')),
          targets_failed = targets_failed + (NEW.status = 'failed') - (OLD.status = 'failed'),
          nbytes = nbytes + coalesce(length(CAST(NEW.result AS BLOB)), 0) - coalesce(length(CAST(OLD.result AS BLOB)), 0),
          lease = coalesce(NEW.updated_at, lease)
        WHERE id = NEW.job_id;
      END`.execute(db);
  }
  await sql`CREATE INDEX batch_job_idem ON batch_job(caller, idem_key)`.execute(db);
  await sql`CREATE INDEX batch_job_lease ON batch_job(lease)`.execute(db);
  await sql`CREATE INDEX batch_job_caller_created ON batch_job(caller, created_at, id)`.execute(db);
  await sql`CREATE INDEX batch_job_status ON batch_job(status)`.execute(db);

  await sql`CREATE TABLE batch_event (
    job_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    type   TEXT NOT NULL,
    at     ${big} NOT NULL,
    data   TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (job_id, seq)
  )`.execute(db);

  await sql`CREATE TABLE clients (
    fingerprint  TEXT PRIMARY KEY,
    caller       TEXT NOT NULL,
    caller_class TEXT NOT NULL,
    created_at   ${big} NOT NULL
  )`.execute(db);

  await sql`CREATE TABLE cache_body (
    digest TEXT PRIMARY KEY,
    body   TEXT NOT NULL,
    nbytes ${big} NOT NULL
  )`.execute(db);
  await sql`CREATE TABLE cache_entry (
    key        TEXT PRIMARY KEY,
    digest     TEXT NOT NULL REFERENCES cache_body(digest),
    meta       TEXT NOT NULL,
    fetched_at ${big} NOT NULL,
    last_used  ${big} NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX cache_entry_last_used ON cache_entry(last_used)`.execute(db);
  await sql`CREATE INDEX cache_entry_digest ON cache_entry(digest)`.execute(db);
}

/** The same counters as SQLite's two triggers, as one PL/pgSQL function (octet_length: UTF-8 bytes). */
async function pgCountTriggers(db: Kysely<any>): Promise<void> {
  await sql`CREATE FUNCTION batch_target_counts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        IF NEW.status IN ('done', 'failed') OR NEW.result IS NOT NULL THEN
          UPDATE batch_job SET
            targets_done = targets_done + (NEW.status IN ('done', 'failed'))::int,
            targets_failed = targets_failed + (NEW.status = 'failed')::int,
            nbytes = nbytes + coalesce(octet_length(NEW.result), 0)
          WHERE id = NEW.job_id;
        END IF;
      ELSE
        UPDATE batch_job SET
          targets_done = targets_done + (NEW.status IN ('done', 'failed'))::int - (OLD.status IN ('done', 'failed'))::int,
          targets_failed = targets_failed + (NEW.status = 'failed')::int - (OLD.status = 'failed')::int,
          nbytes = nbytes + coalesce(octet_length(NEW.result), 0) - coalesce(octet_length(OLD.result), 0),
          lease = coalesce(NEW.updated_at, lease)
        WHERE id = NEW.job_id;
      END IF;
      RETURN NULL;
    END
  $$`.execute(db);
  await sql`CREATE TRIGGER batch_target_counts_insert AFTER INSERT ON batch_target
    FOR EACH ROW EXECUTE FUNCTION batch_target_counts()`.execute(db);
  await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at ON batch_target
    FOR EACH ROW EXECUTE FUNCTION batch_target_counts()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['cache_entry', 'cache_body', 'clients', 'batch_event', 'batch_target', 'batch_job']) {
    await sql`DROP TABLE IF EXISTS ${sql.table(t)}`.execute(db);
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`DROP FUNCTION IF EXISTS batch_target_counts()`.execute(db);
  }
}
