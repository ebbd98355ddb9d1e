import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. Callers share the webhook sender and the batch byte budget fairly:
// a delivery names its job's caller (class:name) and, while it is its job's first pending one and
// no instance holds it, when it is due; a job counts the bytes of its rows beside its results.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const big = pg ? sql.raw('BIGINT') : sql.raw('INTEGER');
  // Bytes of the job's rows other than its results: target URLs, options and errors, a fixed cost
  // per target row and event, and the payload of each webhook delivery.
  await sql`ALTER TABLE batch_job ADD COLUMN row_bytes ${big} NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE batch_delivery ADD COLUMN caller_key TEXT NOT NULL DEFAULT ''`.execute(db);
  // Set only on a delivery that can be taken now or later (first pending of its job, not held):
  // the claim reads nothing else.
  await sql`ALTER TABLE batch_delivery ADD COLUMN due_at ${big}`.execute(db);
  await sql`UPDATE batch_delivery SET caller_key = coalesce((
      SELECT j.caller_class || ':' || j.caller FROM batch_job AS j WHERE j.id = batch_delivery.job_id), '')`.execute(
    db,
  );
  await sql`UPDATE batch_delivery SET due_at = next_attempt_at
    WHERE state = 'pending' AND holder IS NULL
      AND NOT EXISTS (SELECT 1 FROM batch_delivery AS e
                      WHERE e.job_id = batch_delivery.job_id AND e.state = 'pending' AND e.seq < batch_delivery.seq)`.execute(
    db,
  );
  await sql`CREATE INDEX batch_delivery_caller_due ON batch_delivery(caller_key, due_at)
    WHERE due_at IS NOT NULL`.execute(db);
  await sql`CREATE INDEX batch_delivery_caller_pending ON batch_delivery(caller_key)
    WHERE state = 'pending'`.execute(db);
  // A caller's ended jobs in lease order: what eviction takes first from the caller most over its share.
  await sql`CREATE INDEX batch_job_caller_lease ON batch_job(caller, caller_class, lease)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS batch_job_caller_lease`.execute(db);
  await sql`DROP INDEX IF EXISTS batch_delivery_caller_pending`.execute(db);
  await sql`DROP INDEX IF EXISTS batch_delivery_caller_due`.execute(db);
  await sql`ALTER TABLE batch_delivery DROP COLUMN due_at`.execute(db);
  await sql`ALTER TABLE batch_delivery DROP COLUMN caller_key`.execute(db);
  await sql`ALTER TABLE batch_job DROP COLUMN row_bytes`.execute(db);
}
