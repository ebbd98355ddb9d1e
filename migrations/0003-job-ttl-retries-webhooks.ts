import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. Pipelines: a job's own TTL, retry jobs of a parent's failed
// targets, duplicate targets answered by one fetch, and webhooks with their delivery outbox.
export async function up(db: Kysely<any>): Promise<void> {
  const big = db.getExecutor().adapter instanceof PostgresAdapter ? sql.raw('BIGINT') : sql.raw('INTEGER');
  // NULL: the server's SIFT_BATCH_TTL_S applies.
  await sql`ALTER TABLE batch_job ADD COLUMN ttl_s INTEGER`.execute(db);
  await sql`ALTER TABLE batch_job ADD COLUMN parent_id TEXT`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN parent_idx INTEGER`.execute(db);
  // A target with the same URL and options as an earlier one of its job: never claimed, it gets
  // the result of the target it names when that one finishes.
  await sql`ALTER TABLE batch_target ADD COLUMN dup_of INTEGER`.execute(db);
  await sql`CREATE INDEX batch_target_dup ON batch_target(job_id, dup_of) WHERE dup_of IS NOT NULL`.execute(
    db,
  );
  // The webhook of a job, apart from the job row so its secret is read only to sign.
  await sql`CREATE TABLE batch_webhook (
    job_id TEXT PRIMARY KEY,
    url    TEXT NOT NULL,
    secret TEXT NOT NULL,
    events TEXT NOT NULL
  )`.execute(db);
  // The outbox: one row per event to deliver, written in the event's transaction. state: pending
  // (next_attempt_at says when; holder the instance sending it now), delivered, failed.
  await sql`CREATE TABLE batch_delivery (
    job_id          TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    type            TEXT NOT NULL,
    payload         TEXT NOT NULL,
    state           TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      ${big} NOT NULL,
    next_attempt_at ${big} NOT NULL,
    last_status     INTEGER,
    last_error      TEXT,
    last_message    TEXT,
    holder          TEXT,
    PRIMARY KEY (job_id, seq)
  )`.execute(db);
  // Due deliveries by time; a job's first pending one by (job, state, seq).
  await sql`CREATE INDEX batch_delivery_due ON batch_delivery(state, next_attempt_at)`.execute(db);
  await sql`CREATE INDEX batch_delivery_head ON batch_delivery(job_id, state, seq)`.execute(db);
  await sql`CREATE INDEX batch_delivery_holder ON batch_delivery(holder) WHERE holder IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS batch_delivery`.execute(db);
  await sql`DROP TABLE IF EXISTS batch_webhook`.execute(db);
  await sql`DROP INDEX IF EXISTS batch_target_dup`.execute(db);
  await sql`ALTER TABLE batch_target DROP COLUMN dup_of`.execute(db);
  await sql`ALTER TABLE batch_target DROP COLUMN parent_idx`.execute(db);
  await sql`ALTER TABLE batch_job DROP COLUMN parent_id`.execute(db);
  await sql`ALTER TABLE batch_job DROP COLUMN ttl_s`.execute(db);
}
