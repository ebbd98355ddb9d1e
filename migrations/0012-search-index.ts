import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. What a caller can search again: each done target's page (its
// title and text) under its job, and each page it fetched outside a job, indexed for full-text search: SQLite's FTS5 (an external-content
// table over search_doc, kept by triggers, ranked by bm25) and PostgreSQL's tsvector (a generated
// column with a GIN index, ranked by ts_rank). Both stem English words (porter; 'english').
// Results stored before this migration are indexed by it.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const big = pg ? sql.raw('BIGINT') : sql.raw('INTEGER');
  const id = pg ? sql.raw('BIGSERIAL PRIMARY KEY') : sql.raw('INTEGER PRIMARY KEY');
  await sql`CREATE TABLE search_doc (
    id      ${id},
    owner   TEXT NOT NULL,
    job_id  TEXT,
    idx     INTEGER,
    url     TEXT NOT NULL,
    site    TEXT NOT NULL,
    title   TEXT NOT NULL,
    body    TEXT NOT NULL,
    at      ${big} NOT NULL
  )`.execute(db);
  await sql`CREATE UNIQUE INDEX search_doc_target ON search_doc (job_id, idx)`.execute(db);
  await sql`CREATE INDEX search_doc_owner ON search_doc (owner, site)`.execute(db);
  // A page of /v1/fetch (no job): one document a caller and URL, forgotten by age.
  await sql`CREATE INDEX search_doc_fetch ON search_doc (owner, url) WHERE job_id IS NULL`.execute(db);
  await sql`CREATE INDEX search_doc_fetch_at ON search_doc (at) WHERE job_id IS NULL`.execute(db);
  if (pg) {
    await sql`ALTER TABLE search_doc ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
    ) STORED`.execute(db);
    await sql`CREATE INDEX search_doc_tsv ON search_doc USING GIN (tsv)`.execute(db);
  } else {
    await sql`CREATE VIRTUAL TABLE search_fts USING fts5(
      title, body, content='search_doc', content_rowid='id',
      tokenize='porter unicode61 remove_diacritics 2'
    )`.execute(db);
    await sql`CREATE TRIGGER search_doc_insert AFTER INSERT ON search_doc BEGIN
      INSERT INTO search_fts (rowid, title, body) VALUES (NEW.id, NEW.title, NEW.body);
    END`.execute(db);
    await sql`CREATE TRIGGER search_doc_delete AFTER DELETE ON search_doc BEGIN
      INSERT INTO search_fts (search_fts, rowid, title, body) VALUES ('delete', OLD.id, OLD.title, OLD.body);
    END`.execute(db);
  }
  // The results stored so far.
  await sql`INSERT INTO search_doc (owner, job_id, idx, url, site, title, body, at)
    ${pg ? PG_DOC : SQLITE_DOC}
    WHERE t.status = 'done' AND t.result IS NOT NULL`.execute(db);
}

/**
 * A done target as a search document: its job's caller, its URL and host, the envelope's title,
 * its text (content, or the markdown or text of `formats`), at most 262,144 characters, and when
 * it was written (Unix ms).
 */
const SQLITE_DOC = sql.raw(`SELECT j.caller_class || ':' || j.caller, t.job_id, t.idx,
      coalesce(json_extract(t.result, '$.final_url'), t.url), t.host,
      coalesce(json_extract(t.result, '$.title'), ''),
      substr(coalesce(nullif(json_extract(t.result, '$.content'), ''),
        json_extract(t.result, '$.formats.markdown'), json_extract(t.result, '$.formats.text'), ''), 1, 262144),
      CAST(coalesce(t.updated_at, j.created_at) * 1000 AS INTEGER)
    FROM batch_target t JOIN batch_job j ON j.id = t.job_id`);
const PG_DOC = sql.raw(`SELECT j.caller_class || ':' || j.caller, t.job_id, t.idx,
      coalesce(t.result::json->>'final_url', t.url), t.host,
      coalesce(t.result::json->>'title', ''),
      substr(coalesce(nullif(t.result::json->>'content', ''),
        t.result::json->'formats'->>'markdown', t.result::json->'formats'->>'text', ''), 1, 262144),
      (coalesce(t.updated_at, j.created_at) * 1000)::bigint
    FROM batch_target t JOIN batch_job j ON j.id = t.job_id`);
