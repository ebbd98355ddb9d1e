import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. Several sift instances on one database: each has a row with a
// heartbeat, and a running target records the instance that holds it.
export async function up(db: Kysely<any>): Promise<void> {
  const big = db.getExecutor().adapter instanceof PostgresAdapter ? sql.raw('BIGINT') : sql.raw('INTEGER');
  await sql`CREATE TABLE sift_instance (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    started_at   ${big} NOT NULL,
    heartbeat_at ${big} NOT NULL
  )`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN holder TEXT`.execute(db);
  // The per-host limit counts running targets by host over all jobs and instances. Targets stored
  // before this column have none ('' counts as one host); new ones get theirs at submit.
  await sql`ALTER TABLE batch_target ADD COLUMN host TEXT NOT NULL DEFAULT ''`.execute(db);
  await sql`CREATE INDEX batch_target_running_host ON batch_target(status, host)`.execute(db);
  // Claims look for a job's pending targets in idx order; recovery for an instance's running ones.
  await sql`CREATE INDEX batch_target_status ON batch_target(job_id, status, idx)`.execute(db);
  await sql`CREATE INDEX batch_target_holder ON batch_target(holder) WHERE holder IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS batch_target_running_host`.execute(db);
  await sql`DROP INDEX IF EXISTS batch_target_holder`.execute(db);
  await sql`ALTER TABLE batch_target DROP COLUMN host`.execute(db);
  await sql`DROP INDEX IF EXISTS batch_target_status`.execute(db);
  await sql`ALTER TABLE batch_target DROP COLUMN holder`.execute(db);
  await sql`DROP TABLE IF EXISTS sift_instance`.execute(db);
}
