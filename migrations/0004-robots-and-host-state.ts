import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. robots.txt per origin and the state of each host (a backoff
// pause, the next slot a Crawl-delay allows), shared by every instance; a target's verdict and
// how often it was put back for a paused host; a job's count of flagged targets.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const big = pg ? sql.raw('BIGINT') : sql.raw('INTEGER');
  // kind: rules (body holds them), allow (4xx: everything allowed), disallow (5xx, unreachable).
  await sql`CREATE TABLE robots_txt (
    origin     TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    status     INTEGER NOT NULL,
    body       TEXT NOT NULL,
    fetched_at ${big} NOT NULL,
    expires_at ${big} NOT NULL
  )`.execute(db);
  // Times in milliseconds.
  await sql`CREATE TABLE host_state (
    host         TEXT PRIMARY KEY,
    paused_until ${big} NOT NULL DEFAULT 0,
    next_at      ${big} NOT NULL DEFAULT 0
  )`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN verdict TEXT`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN deferrals INTEGER NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE batch_job ADD COLUMN targets_flagged INTEGER NOT NULL DEFAULT 0`.execute(db);
  // The counting triggers of 0001 gain targets_flagged: done targets whose verdict is not ok.
  if (pg) {
    await sql`CREATE OR REPLACE FUNCTION batch_target_counts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF NEW.status IN ('done', 'failed') OR NEW.result IS NOT NULL THEN
            UPDATE batch_job SET
              targets_done = targets_done + (NEW.status IN ('done', 'failed'))::int,
              targets_failed = targets_failed + (NEW.status = 'failed')::int,
              targets_flagged = targets_flagged + (NEW.status = 'done' AND coalesce(NEW.verdict, 'ok') <> 'ok')::int,
              nbytes = nbytes + coalesce(octet_length(NEW.result), 0)
            WHERE id = NEW.job_id;
          END IF;
        ELSE
          UPDATE batch_job SET
            targets_done = targets_done + (NEW.status IN ('done', 'failed'))::int - (OLD.status IN ('done', 'failed'))::int,
            targets_failed = targets_failed + (NEW.status = 'failed')::int - (OLD.status = 'failed')::int,
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
    await sql`DROP TRIGGER batch_target_counts_update ON batch_target`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at, verdict ON batch_target
      FOR EACH ROW EXECUTE FUNCTION batch_target_counts()`.execute(db);
  } else {
    await sql`DROP TRIGGER batch_target_counts_insert`.execute(db);
    await sql`DROP TRIGGER batch_target_counts_update`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_insert AFTER INSERT ON batch_target
      WHEN NEW.status IN ('done', 'failed') OR NEW.result IS NOT NULL
      BEGIN
        UPDATE batch_job SET
          targets_done = targets_done + (NEW.status IN ('done', 'failed')),
          targets_failed = targets_failed + (NEW.status = 'failed'),
          targets_flagged = targets_flagged + (NEW.status = 'done' AND coalesce(NEW.verdict, 'ok') <> 'ok'),
          nbytes = nbytes + coalesce(length(CAST(NEW.result AS BLOB)), 0)
        WHERE id = NEW.job_id;
      END`.execute(db);
    await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at, verdict ON batch_target
      BEGIN
        UPDATE batch_job SET
          targets_done = targets_done + (NEW.status IN ('done', 'failed')) - (OLD.status IN ('done', 'failed')),
          targets_failed = targets_failed + (NEW.status = 'failed') - (OLD.status = 'failed'),
          targets_flagged = targets_flagged
            + (NEW.status = 'done' AND coalesce(NEW.verdict, 'ok') <> 'ok')
            - (OLD.status = 'done' AND coalesce(OLD.verdict, 'ok') <> 'ok'),
          nbytes = nbytes + coalesce(length(CAST(NEW.result AS BLOB)), 0) - coalesce(length(CAST(OLD.result AS BLOB)), 0),
          lease = coalesce(NEW.updated_at, lease)
        WHERE id = NEW.job_id;
      END`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS robots_txt`.execute(db);
  await sql`DROP TABLE IF EXISTS host_state`.execute(db);
  // The columns stay: the triggers of 0001 (restored by hand) ignore them.
}
