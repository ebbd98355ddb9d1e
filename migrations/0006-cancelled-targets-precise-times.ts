import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. A cancelled job's unfinished targets end 'cancelled', counted in
// the job's targets_cancelled (not in targets_done, which stays the seed's count of done and failed
// targets). Times of jobs, targets, events and deliveries are kept to the millisecond: still Unix
// seconds, with a fraction. SQLite's INTEGER affinity keeps a value that is not integral as REAL,
// so only PostgreSQL's BIGINT columns change type.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  await sql`ALTER TABLE batch_job ADD COLUMN targets_cancelled INTEGER NOT NULL DEFAULT 0`.execute(db);
  if (pg) {
    // A column named in a trigger's UPDATE OF list cannot change type under it.
    await sql`DROP TRIGGER batch_target_counts_update ON batch_target`.execute(db);
    await sql`ALTER TABLE batch_job
      ALTER COLUMN created_at TYPE double precision,
      ALTER COLUMN lease TYPE double precision`.execute(db);
    await sql`ALTER TABLE batch_target ALTER COLUMN updated_at TYPE double precision`.execute(db);
    await sql`ALTER TABLE batch_event ALTER COLUMN at TYPE double precision`.execute(db);
    await sql`ALTER TABLE batch_delivery
      ALTER COLUMN created_at TYPE double precision,
      ALTER COLUMN next_attempt_at TYPE double precision,
      ALTER COLUMN due_at TYPE double precision`.execute(db);
    await sql`CREATE OR REPLACE FUNCTION batch_target_counts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF NEW.status IN ('done', 'failed', 'cancelled') OR NEW.result IS NOT NULL THEN
            UPDATE batch_job SET
              targets_done = targets_done + (NEW.status IN ('done', 'failed'))::int,
              targets_failed = targets_failed + (NEW.status = 'failed')::int,
              targets_cancelled = targets_cancelled + (NEW.status = 'cancelled')::int,
              targets_flagged = targets_flagged + (NEW.status = 'done' AND coalesce(NEW.verdict, 'ok') <> 'ok')::int,
              nbytes = nbytes + coalesce(octet_length(NEW.result), 0)
            WHERE id = NEW.job_id;
          END IF;
        ELSE
          UPDATE batch_job SET
            targets_done = targets_done + (NEW.status IN ('done', 'failed'))::int - (OLD.status IN ('done', 'failed'))::int,
            targets_failed = targets_failed + (NEW.status = 'failed')::int - (OLD.status = 'failed')::int,
            targets_cancelled = targets_cancelled + (NEW.status = 'cancelled')::int - (OLD.status = 'cancelled')::int,
            targets_flagged = targets_flagged
              + (NEW.status = 'done' AND coalesce(NEW.verdict, 'ok') <> 'ok')::int
              - (OLD.status = 'done' AND coalesce(OLD.verdict, 'ok') <> 'ok')::int,
            nbytes = nbytes + coalesce(octet_length(NEW.result), 0) - coalesce(octet_length(OLD.result), 0),
            lease = coalesce(NEW.updated_at, lease)
          WHERE id = NEW.job_id;
        END IF;
        RETURN NULL;
      END
    $$`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at, verdict ON batch_target
      FOR EACH ROW EXECUTE FUNCTION batch_target_counts()`.execute(db);
  } else {
    await sql`DROP TRIGGER batch_target_counts_insert`.execute(db);
    await sql`DROP TRIGGER batch_target_counts_update`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_insert AFTER INSERT ON batch_target
      WHEN NEW.status IN ('done', 'failed', 'cancelled') OR NEW.result IS NOT NULL
      BEGIN
        UPDATE batch_job SET
          targets_done = targets_done + (NEW.status IN ('done', 'failed')),
          targets_failed = targets_failed + (NEW.status = 'failed'),
          targets_cancelled = targets_cancelled + (NEW.status = 'cancelled'),
          targets_flagged = targets_flagged + (NEW.status = 'done' AND coalesce(NEW.verdict, 'ok') <> 'ok'),
          nbytes = nbytes + coalesce(length(CAST(NEW.result AS BLOB)), 0)
        WHERE id = NEW.job_id;
      END`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at, verdict ON batch_target
      BEGIN
        UPDATE batch_job SET
          targets_done = targets_done + (NEW.status IN ('done', 'failed')) - (OLD.status IN ('done', 'failed')),
          targets_failed = targets_failed + (NEW.status = 'failed') - (OLD.status = 'failed'),
          targets_cancelled = targets_cancelled + (NEW.status = 'cancelled') - (OLD.status = 'cancelled'),
          targets_flagged = targets_flagged
            + (NEW.status = 'done' AND coalesce(NEW.verdict, 'ok') <> 'ok')
            - (OLD.status = 'done' AND coalesce(OLD.verdict, 'ok') <> 'ok'),
          nbytes = nbytes + coalesce(length(CAST(NEW.result AS BLOB)), 0) - coalesce(length(CAST(OLD.result AS BLOB)), 0),
          lease = coalesce(NEW.updated_at, lease)
        WHERE id = NEW.job_id;
      END`.execute(db);
  }
  // Jobs cancelled before this left their unstarted targets pending: they end cancelled now. Their
  // updated_at is the job's lease, so the trigger leaves the lease where it was.
  await sql`UPDATE batch_target SET status = 'cancelled', holder = NULL,
      updated_at = (SELECT j.lease FROM batch_job AS j WHERE j.id = batch_target.job_id)
    WHERE status IN ('pending', 'running')
      AND job_id IN (SELECT id FROM batch_job WHERE status = 'cancelled')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Cancelled targets go back to pending, as before this migration; the column and the triggers
  // stay (the triggers of 0004, restored by hand, ignore targets_cancelled). PostgreSQL's times are
  // rounded back to whole seconds.
  await sql`UPDATE batch_target SET status = 'pending' WHERE status = 'cancelled'`.execute(db);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`DROP TRIGGER batch_target_counts_update ON batch_target`.execute(db);
    await sql`ALTER TABLE batch_job
      ALTER COLUMN created_at TYPE BIGINT USING round(created_at),
      ALTER COLUMN lease TYPE BIGINT USING round(lease)`.execute(db);
    await sql`ALTER TABLE batch_target ALTER COLUMN updated_at TYPE BIGINT USING round(updated_at)`.execute(
      db,
    );
    await sql`ALTER TABLE batch_event ALTER COLUMN at TYPE BIGINT USING round(at)`.execute(db);
    await sql`ALTER TABLE batch_delivery
      ALTER COLUMN created_at TYPE BIGINT USING round(created_at),
      ALTER COLUMN next_attempt_at TYPE BIGINT USING round(next_attempt_at),
      ALTER COLUMN due_at TYPE BIGINT USING round(due_at)`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at, verdict ON batch_target
      FOR EACH ROW EXECUTE FUNCTION batch_target_counts()`.execute(db);
  }
}
