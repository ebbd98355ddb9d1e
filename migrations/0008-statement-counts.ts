import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. PostgreSQL keeps a job's counts (targets_done, targets_failed,
// targets_cancelled, targets_flagged, nbytes) and its lease by statement, not by row: a statement
// that ended 10,000 targets (a cancel, a restart, a retry) updated the job's row 10,000 times in one
// transaction, each update walking the chain of the row's earlier versions (1,000 targets 36 ms,
// 10,000 883 ms). Now each statement adds up its rows' changes per job and updates each job once.
// The counts are those of 0006's row trigger; SQLite keeps its row triggers (it updates in place).
// An UPDATE trigger with transition tables cannot name columns: it runs for every UPDATE of
// batch_target, and a statement that changed no status, result or verdict changes no count.
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`DROP TRIGGER batch_target_counts_insert ON batch_target`.execute(db);
  await sql`DROP TRIGGER batch_target_counts_update ON batch_target`.execute(db);
  await sql`CREATE FUNCTION batch_target_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE batch_job AS j SET
        targets_done = j.targets_done + d.done,
        targets_failed = j.targets_failed + d.failed,
        targets_cancelled = j.targets_cancelled + d.cancelled,
        targets_flagged = j.targets_flagged + d.flagged,
        nbytes = j.nbytes + d.nbytes
      FROM (
        SELECT job_id,
          count(*) FILTER (WHERE status IN ('done', 'failed')) AS done,
          count(*) FILTER (WHERE status = 'failed') AS failed,
          count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
          count(*) FILTER (WHERE status = 'done' AND coalesce(verdict, 'ok') <> 'ok') AS flagged,
          coalesce(sum(octet_length(result)), 0) AS nbytes
        FROM new_rows
        WHERE status IN ('done', 'failed', 'cancelled') OR result IS NOT NULL
        GROUP BY job_id
      ) AS d
      WHERE j.id = d.job_id;
      RETURN NULL;
    END
  $$`.execute(db);
  await sql`CREATE FUNCTION batch_target_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE batch_job AS j SET
        targets_done = j.targets_done + d.done,
        targets_failed = j.targets_failed + d.failed,
        targets_cancelled = j.targets_cancelled + d.cancelled,
        targets_flagged = j.targets_flagged + d.flagged,
        nbytes = j.nbytes + d.nbytes,
        lease = coalesce(d.lease, j.lease)
      FROM (
        SELECT n.job_id,
          sum((n.status IN ('done', 'failed'))::int - (o.status IN ('done', 'failed'))::int) AS done,
          sum((n.status = 'failed')::int - (o.status = 'failed')::int) AS failed,
          sum((n.status = 'cancelled')::int - (o.status = 'cancelled')::int) AS cancelled,
          sum((n.status = 'done' AND coalesce(n.verdict, 'ok') <> 'ok')::int
            - (o.status = 'done' AND coalesce(o.verdict, 'ok') <> 'ok')::int) AS flagged,
          sum(coalesce(octet_length(n.result), 0) - coalesce(octet_length(o.result), 0)) AS nbytes,
          max(n.updated_at) AS lease
        FROM new_rows AS n JOIN old_rows AS o ON o.job_id = n.job_id AND o.idx = n.idx
        WHERE n.status IS DISTINCT FROM o.status
          OR n.result IS DISTINCT FROM o.result
          OR n.verdict IS DISTINCT FROM o.verdict
          OR n.updated_at IS DISTINCT FROM o.updated_at
        GROUP BY n.job_id
      ) AS d
      WHERE j.id = d.job_id;
      RETURN NULL;
    END
  $$`.execute(db);
  await sql`CREATE TRIGGER batch_target_counts_insert AFTER INSERT ON batch_target
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION batch_target_counts_inserted()`.execute(db);
  await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE ON batch_target
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION batch_target_counts_updated()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`DROP TRIGGER batch_target_counts_insert ON batch_target`.execute(db);
  await sql`DROP TRIGGER batch_target_counts_update ON batch_target`.execute(db);
  await sql`DROP FUNCTION batch_target_counts_inserted()`.execute(db);
  await sql`DROP FUNCTION batch_target_counts_updated()`.execute(db);
  // 0006's row function is still defined.
  await sql`CREATE TRIGGER batch_target_counts_insert AFTER INSERT ON batch_target
    FOR EACH ROW EXECUTE FUNCTION batch_target_counts()`.execute(db);
  await sql`CREATE TRIGGER batch_target_counts_update AFTER UPDATE OF status, result, updated_at, verdict ON batch_target
    FOR EACH ROW EXECUTE FUNCTION batch_target_counts()`.execute(db);
}
