import { Kysely, sql } from 'kysely';

// Frozen in time: literals only. A job is a batch or a crawl; a crawl keeps what it was asked (its
// seed and scope, as JSON) and grows its targets as its pages are read. A crawl's target knows how
// many link hops it is from the seed, the page it was found on, its canonical URL, the digest of
// its body, and the earlier target it turned out to duplicate. crawl_seen holds every canonical URL
// a crawl has met (its targets' and where their redirects led), one row each: a URL is added once.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE batch_job ADD COLUMN kind TEXT NOT NULL DEFAULT 'batch'`.execute(db);
  await sql`ALTER TABLE batch_job ADD COLUMN crawl TEXT`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN depth INTEGER`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN found_on INTEGER`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN canonical TEXT`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN digest TEXT`.execute(db);
  await sql`ALTER TABLE batch_target ADD COLUMN duplicate_of INTEGER`.execute(db);
  await sql`CREATE INDEX batch_target_digest ON batch_target(job_id, digest, idx) WHERE digest IS NOT NULL`.execute(
    db,
  );
  await sql`CREATE TABLE crawl_seen (
      job_id TEXT NOT NULL,
      canonical TEXT NOT NULL,
      idx INTEGER NOT NULL,
      PRIMARY KEY (job_id, canonical)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS crawl_seen`.execute(db);
  await sql`DROP INDEX IF EXISTS batch_target_digest`.execute(db);
  for (const c of ['duplicate_of', 'digest', 'canonical', 'found_on', 'depth']) {
    await sql`ALTER TABLE batch_target DROP COLUMN ${sql.raw(c)}`.execute(db);
  }
  await sql`ALTER TABLE batch_job DROP COLUMN crawl`.execute(db);
  await sql`ALTER TABLE batch_job DROP COLUMN kind`.execute(db);
}
