import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. What a caller can search again: each done target's page (its
// title and text) under its job, and each page it fetched outside a job, indexed for full-text
// search: SQLite's FTS5 (an external-content table over search_doc, kept by triggers, ranked by
// bm25) and PostgreSQL's tsvector (a generated column with a GIN index, ranked by ts_rank). Both
// stem English words (porter; 'english'). Results stored before this migration are indexed by it.
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
  await indexStored(db);
}

/** Results a page at a time, read and written by key. */
const PAGE = 200;
/** A document's text is at most this many characters. */
const INDEXED_CHARS = 262_144;

/**
 * The results stored so far, each as a document: its job's caller, its final URL, the host of the
 * URL asked, its title and its text (content, or the markdown or text of `formats`), without NUL
 * or lone surrogates, and when it was written (Unix ms). Read in JavaScript, not by the database's
 * JSON functions: PostgreSQL's refuse a string holding \u0000.
 */
async function indexStored(db: Kysely<any>): Promise<void> {
  let after = { job: '', idx: -1 };
  for (;;) {
    const rows = (
      await sql<{ job_id: string; idx: number; result: string; at: number; owner: string }>`
      SELECT t.job_id, t.idx, t.result, coalesce(t.updated_at, j.created_at) AS at,
        j.caller_class || ':' || j.caller AS owner
      FROM batch_target t JOIN batch_job j ON j.id = t.job_id
      WHERE t.status = 'done' AND t.result IS NOT NULL
        AND (t.job_id > ${after.job} OR (t.job_id = ${after.job} AND t.idx > ${after.idx}))
      ORDER BY t.job_id, t.idx LIMIT ${PAGE}`.execute(db)
    ).rows;
    if (rows.length === 0) return;
    for (const r of rows) {
      const d = docOf(r.result);
      if (!d) continue;
      await sql`INSERT INTO search_doc (owner, job_id, idx, url, site, title, body, at)
        VALUES (${r.owner}, ${r.job_id}, ${Number(r.idx)}, ${d.url}, ${d.site}, ${d.title}, ${d.body},
          ${Math.round(Number(r.at) * 1000)})`.execute(db);
    }
    const last = rows[rows.length - 1];
    after = { job: last.job_id, idx: Number(last.idx) };
  }
}

function docOf(result: string): { url: string; site: string; title: string; body: string } | undefined {
  let e: Record<string, any>;
  try {
    e = JSON.parse(result) as Record<string, any>;
  } catch {
    return undefined;
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const clean = (s: string) =>
    s
      .replace(/\0/g, '')
      .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  const body = str(e.content) || str(e.formats?.markdown) || str(e.formats?.text);
  const url = str(e.final_url) || str(e.url);
  if (!body || !url) return undefined;
  let site = '';
  try {
    site = new URL(str(e.url) || url).host;
  } catch {
    // no site
  }
  return { url: clean(url), site, title: clean(str(e.title)), body: clean(body.slice(0, INDEXED_CHARS)) };
}
