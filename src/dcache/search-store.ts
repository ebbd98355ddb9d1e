import { sql, type RawBuilder } from 'kysely';
import type { Db, Tx } from './db';

/** A page found again: where it is, what it says near the words asked, and how well it matched. */
export interface SearchHit {
  url: string;
  title: string;
  snippet: string;
  score: number;
  job_id: string | null;
  idx: number | null;
}

export interface SearchAsk {
  /** The caller's key (class:name): only its own pages are found. */
  owner: string;
  /** Words, every one of which a page must have (English words are stemmed). */
  words: string[];
  /** Only pages of these jobs. */
  jobs?: string[];
  /** Only pages of this host or a host under it. */
  site?: string;
  limit: number;
}

/** A document's text is at most this many characters (the rest of a long page is not indexed). */
export const INDEXED_CHARS = 262_144;

/**
 * The search index over what callers fetched (migration 0012): one document a done target with a
 * result, written in the transaction that records the result and removed with its job's rows
 * (whole-jobs.ts); one a page a caller fetched outside a job, replaced by its next fetch and
 * forgotten by age. SQLite matches with FTS5 and ranks by bm25 (title weighted 5 to the body's 1);
 * PostgreSQL with a tsvector (title weight A, body B) and ts_rank. Every query names its owner.
 */
export class SearchStore {
  constructor(private readonly db: Db) {}

  /** The target's result as a document, if it has one (a crawl's duplicate has none). */
  static async indexResult(tx: Tx, jobId: string, idx: number): Promise<void> {
    await sql`INSERT INTO search_doc (owner, job_id, idx, url, site, title, body, at)
      ${tx.pg ? PG_DOC : SQLITE_DOC}
      WHERE t.job_id = ${jobId} AND t.idx = ${idx} AND t.result IS NOT NULL
      ON CONFLICT (job_id, idx) DO NOTHING`.execute(tx.q);
  }

  /**
   * A page the caller fetched outside a job (/v1/fetch, a scrape, MCP's fetch): its one document
   * for that URL, replaced.
   */
  async indexFetch(d: { owner: string; url: string; site: string; title: string; body: string; at: number }) {
    await this.db.transaction(async (tx) => {
      await tx.q
        .deleteFrom('search_doc')
        .where('owner', '=', d.owner)
        .where('url', '=', d.url)
        .where('job_id', 'is', null)
        .execute();
      await tx.q
        .insertInto('search_doc')
        .values({ ...d, body: d.body.slice(0, INDEXED_CHARS), job_id: null, idx: null })
        .execute();
    });
  }

  /** Forgets pages fetched outside a job last fetched before `beforeMs`. */
  async sweepFetches(beforeMs: number): Promise<number> {
    const r = await this.db.q
      .deleteFrom('search_doc')
      .where('job_id', 'is', null)
      .where('at', '<', beforeMs)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async search(a: SearchAsk): Promise<SearchHit[]> {
    if (a.words.length === 0) return [];
    const rows = this.db.pg ? await this.searchPg(a) : await this.searchSqlite(a);
    return rows.map((r) => ({
      url: r.url,
      title: r.title,
      snippet: r.snippet.replace(/\s+/g, ' ').trim(),
      score: Math.round(Number(r.score) * 1e6) / 1e6,
      job_id: r.job_id,
      idx: r.idx === null ? null : Number(r.idx),
    }));
  }

  private async searchSqlite(a: SearchAsk): Promise<SearchHit[]> {
    // Each word a quoted string: nothing the caller sends is read as FTS5's query syntax.
    const match = a.words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' ');
    const r = await sql<SearchHit>`SELECT d.url, d.title, d.job_id, d.idx,
        snippet(search_fts, 1, '', '', '…', 24) AS snippet, -bm25(search_fts, 5.0, 1.0) AS score
      FROM search_fts JOIN search_doc d ON d.id = search_fts.rowid
      WHERE search_fts MATCH ${match} AND d.owner = ${a.owner} ${this.filters(a)}
      ORDER BY bm25(search_fts, 5.0, 1.0), d.id
      LIMIT ${a.limit}`.execute(this.db.q);
    return r.rows;
  }

  private async searchPg(a: SearchAsk): Promise<SearchHit[]> {
    // The best `limit` first, then a headline of each of them only (ts_headline reads the body).
    const r = await sql<SearchHit>`WITH q AS (SELECT plainto_tsquery('english', ${a.words.join(' ')}) AS q),
      top AS (
        SELECT d.id, d.url, d.title, d.job_id, d.idx, d.body, ts_rank(d.tsv, q.q) AS score
        FROM search_doc d, q
        WHERE d.tsv @@ q.q AND d.owner = ${a.owner} ${this.filters(a)}
        ORDER BY score DESC, d.id
        LIMIT ${a.limit})
      SELECT top.url, top.title, top.job_id, top.idx, top.score,
        ts_headline('english', top.body, q.q, 'MaxWords=30, MinWords=12, MaxFragments=1, StartSel="", StopSel=""') AS snippet
      FROM top, q ORDER BY top.score DESC, top.id`.execute(this.db.q);
    return r.rows;
  }

  private filters(a: SearchAsk): RawBuilder<unknown> {
    const parts: RawBuilder<unknown>[] = [];
    if (a.jobs) parts.push(sql`AND d.job_id IN (${sql.join(a.jobs)})`);
    if (a.site)
      parts.push(sql`AND (d.site = ${a.site} OR d.site LIKE ${`%.${likeEscaped(a.site)}`} ESCAPE '\\')`);
    return sql.join(parts, sql` `);
  }
}

const likeEscaped = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A done target as a document, as migration 0012 wrote those before it: its job's caller, its URL
 * and host, the envelope's title, its text (content, or the markdown or text of `formats`), at
 * most INDEXED_CHARS characters, and when it was written (Unix ms).
 */
const SQLITE_DOC = sql.raw(`SELECT j.caller_class || ':' || j.caller, t.job_id, t.idx,
      coalesce(json_extract(t.result, '$.final_url'), t.url), t.host,
      coalesce(json_extract(t.result, '$.title'), ''),
      substr(coalesce(nullif(json_extract(t.result, '$.content'), ''),
        json_extract(t.result, '$.formats.markdown'), json_extract(t.result, '$.formats.text'), ''), 1, ${INDEXED_CHARS}),
      CAST(coalesce(t.updated_at, j.created_at) * 1000 AS INTEGER)
    FROM batch_target t JOIN batch_job j ON j.id = t.job_id`);
const PG_DOC = sql.raw(`SELECT j.caller_class || ':' || j.caller, t.job_id, t.idx,
      coalesce(t.result::json->>'final_url', t.url), t.host,
      coalesce(t.result::json->>'title', ''),
      substr(coalesce(nullif(t.result::json->>'content', ''),
        t.result::json->'formats'->>'markdown', t.result::json->'formats'->>'text', ''), 1, ${INDEXED_CHARS}),
      (coalesce(t.updated_at, j.created_at) * 1000)::bigint
    FROM batch_target t JOIN batch_job j ON j.id = t.job_id`);
