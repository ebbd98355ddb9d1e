import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Tables } from './schema';
import type { Db, Tx } from './db';
import { tsqueryOf, tsvectorOf } from './search-lexemes';

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
 * PostgreSQL with a tsvector (title weight A, body B; its words worked out by sift, see
 * search-lexemes.ts) and ts_rank. Every query names its owner.
 */
export class SearchStore {
  constructor(private readonly db: Db) {}

  /**
   * The target's page as its document (none for a page without text); its id, or undefined when
   * it has one already.
   */
  static async indexResult(
    tx: Tx,
    jobId: string,
    idx: number,
    d: PageDoc | undefined,
    atMs: number,
  ): Promise<number | undefined> {
    if (!d) return undefined;
    const [tsv, vector] = tx.pg
      ? [sql`, tsv`, sql`, ${tsvectorOf(d.title, d.body)}::tsvector`]
      : [sql``, sql``];
    const r = await sql<{
      id: number;
    }>`INSERT INTO search_doc (owner, job_id, idx, url, site, title, body, at${tsv})
      SELECT j.caller_class || ':' || j.caller, ${jobId}, ${idx}, ${d.url}, ${d.site}, ${d.title}, ${d.body}, ${atMs}${vector}
      FROM batch_job j WHERE j.id = ${jobId}
      ON CONFLICT (job_id, idx) DO NOTHING RETURNING id`.execute(tx.q);
    return r.rows.length > 0 ? Number(r.rows[0].id) : undefined;
  }

  /** Takes a document out again. */
  static async unindex(tx: Tx, id: number): Promise<void> {
    await tx.q.deleteFrom('search_doc').where('id', '=', id).execute();
  }

  /** Takes out the documents of the job's targets whose results were cleared (a restart's retry). */
  static async unindexCleared(tx: Tx, jobId: string): Promise<void> {
    await sql`DELETE FROM search_doc WHERE job_id = ${jobId}
      AND idx IN (SELECT idx FROM batch_target WHERE job_id = ${jobId} AND result IS NULL)`.execute(tx.q);
  }

  /**
   * A page the caller fetched outside a job (/v1/fetch, a scrape, MCP's fetch): its one document
   * for that URL, replaced.
   */
  async indexFetch(owner: string, page: PageDoc, at: number) {
    const d = { ...page, owner, at };
    await this.db.transaction(async (tx) => {
      await tx.q
        .deleteFrom('search_doc')
        .where('owner', '=', d.owner)
        .where('url', '=', d.url)
        .where('job_id', 'is', null)
        .execute();
      await tx.q
        .insertInto('search_doc')
        .values({
          ...d,
          job_id: null,
          idx: null,
          ...(tx.pg ? { tsv: sql<string>`${tsvectorOf(d.title, d.body)}::tsvector` } : {}),
        })
        .execute();
    });
  }

  /**
   * PostgreSQL: works out the words of documents stored without them (those a database held when
   * sift began to work them out itself, migration 0013), WAITING_ROWS a transaction, rows another
   * instance is on skipped. Returns how many. SQLite's documents are always indexed.
   */
  async indexWaiting(): Promise<number> {
    if (!this.db.pg) return 0;
    let total = 0;
    for (;;) {
      const n = await this.db.transaction(async (tx) => {
        const rows = (
          await sql<{ id: number; title: string; body: string }>`SELECT id, title, body FROM search_doc
            WHERE tsv IS NULL ORDER BY id LIMIT ${WAITING_ROWS} FOR UPDATE SKIP LOCKED`.execute(tx.q)
        ).rows;
        for (const r of rows) {
          await sql`UPDATE search_doc SET tsv = ${tsvectorOf(r.title, r.body)}::tsvector
            WHERE id = ${r.id}`.execute(tx.q);
        }
        return rows.length;
      });
      if (n === 0) return total;
      total += n;
    }
  }

  /**
   * Forgets pages fetched outside a job last fetched before `beforeMs`, and each caller's oldest
   * past its newest FETCHED_PER_CALLER, SWEEP_ROWS a statement (on SQLite each deleted document is
   * read again by its full-text index, holding the loop). Returns how many went.
   */
  async sweepFetches(beforeMs: number): Promise<number> {
    let total = await this.deleteByIds(
      this.db.q.selectFrom('search_doc').select('id').where('job_id', 'is', null).where('at', '<', beforeMs),
    );
    const over = await this.db.q
      .selectFrom('search_doc')
      .select(['owner', (eb) => eb.fn.countAll<number>().as('n')])
      .where('job_id', 'is', null)
      .groupBy('owner')
      .having((eb) => eb.fn.countAll(), '>', FETCHED_PER_CALLER)
      .execute();
    for (const o of over) {
      const extra = Number(o.n) - FETCHED_PER_CALLER;
      total += await this.deleteByIds(
        this.db.q
          .selectFrom('search_doc')
          .select('id')
          .where('job_id', 'is', null)
          .where('owner', '=', o.owner)
          .orderBy('at')
          .orderBy('id'),
        extra,
      );
    }
    return total;
  }

  /** Deletes the rows `ids` selects (up to `max`), SWEEP_ROWS at a time. */
  private async deleteByIds(
    ids: SelectQueryBuilder<Tables, 'search_doc', { id: number }>,
    max = Number.MAX_SAFE_INTEGER,
  ): Promise<number> {
    let done = 0;
    while (done < max) {
      const rows = await ids.limit(Math.min(SWEEP_ROWS, max - done)).execute();
      if (rows.length === 0) break;
      await this.db.q
        .deleteFrom('search_doc')
        .where(
          'id',
          'in',
          rows.map((r) => Number(r.id)),
        )
        .execute();
      done += rows.length;
      await new Promise((r) => setImmediate(r));
    }
    return done;
  }

  async search(a: SearchAsk): Promise<SearchHit[]> {
    if (a.words.length === 0 || a.jobs?.length === 0) return [];
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
    const query = tsqueryOf(a.words);
    if (!query) return [];
    // The best `limit` first, then a headline of each of them only (ts_headline reads the body).
    const r = await sql<SearchHit>`WITH q AS (SELECT ${query}::tsquery AS q),
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

/** Documents given their words in one transaction (indexWaiting). */
const WAITING_ROWS = 100;
/** Documents deleted by one statement of the sweep. */
const SWEEP_ROWS = 200;
/** Pages fetched outside a job kept findable per caller, the newest. */
const FETCHED_PER_CALLER = 10_000;

/** What a text may not hold in the index: NUL (PostgreSQL's text has none), lone surrogates. */
function indexable(text: string): string {
  return text
    .replace(/\0/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** A page as the index keeps it. */
export interface PageDoc {
  url: string;
  site: string;
  title: string;
  body: string;
}

/**
 * An envelope (or its stored JSON) as a document: its final URL, the host of the URL asked
 * (`site`), its title, and its text (content, or the markdown or text of `formats`), at most
 * INDEXED_CHARS characters, without what the index may not hold. Undefined for no text.
 */
export function pageDocOf(e: {
  url?: unknown;
  final_url?: unknown;
  title?: unknown;
  content?: unknown;
  formats?: object;
}): PageDoc | undefined {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const formats = (e.formats ?? {}) as Record<string, unknown>;
  const body = str(e.content) || str(formats.markdown) || str(formats.text) || chunksText(formats.chunks);
  const url = str(e.final_url) || str(e.url);
  if (!body || !url) return undefined;
  const asked = str(e.url) || url;
  return {
    url: indexable(url),
    site: URL.canParse(asked) ? new URL(asked).host : '',
    title: indexable(str(e.title)),
    body: indexable(body.slice(0, INDEXED_CHARS)),
  };
}

/** The texts of "chunks" joined (the markdown again, with any overlap twice): what a result of chunks alone says. */
function chunksText(chunks: unknown): string {
  if (!Array.isArray(chunks)) return '';
  return chunks
    .map((c) => (typeof (c as { text?: unknown })?.text === 'string' ? (c as { text: string }).text : ''))
    .join('');
}

/** A stored result's document (see pageDocOf). */
export function storedDocOf(result: string): PageDoc | undefined {
  try {
    return pageDocOf(JSON.parse(result) as object);
  } catch {
    return undefined;
  }
}
