import { sql } from 'kysely';
import type { Tx } from './db';
import { INSERT_CHUNK, chunks } from './rows';
import { hostOf } from '../common/urls';

/** A page a crawl found, to be fetched. */
export interface FoundTarget {
  url: string;
  canonical: string;
  depth: number;
  /** The idx of the page it was found on (null: a sitemap's entry). */
  foundOn: number | null;
  options: string;
}

/**
 * The writers of a crawl's growth, inside the transaction that holds its job's row: what a crawl
 * has met (crawl_seen, one row per canonical URL), the targets its pages add, and what a page
 * turned out to be (its body's digest, or the earlier page it duplicates).
 */
export class CrawlRepository {
  constructor(private readonly tx: Tx) {}

  /** Of these canonical URLs, those the job has met, with the target each is (or led to it). */
  async seen(jobId: string, canonicals: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const part of chunks([...new Set(canonicals)], INSERT_CHUNK)) {
      const rows = await this.tx.q
        .selectFrom('crawl_seen')
        .select(['canonical', 'idx'])
        .where('job_id', '=', jobId)
        .where('canonical', 'in', part)
        .execute();
      for (const r of rows) out.set(r.canonical, r.idx);
    }
    return out;
  }

  /** Notes a canonical URL the job has met (where a redirect led): nothing if already met. */
  async note(jobId: string, canonical: string, idx: number): Promise<void> {
    await this.tx.q
      .insertInto('crawl_seen')
      .values({ job_id: jobId, canonical, idx })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /**
   * Adds the targets after the job's last, pending, each canonical URL noted; the job's
   * targets_total and row_bytes grow with them. The caller holds the job's row and has checked
   * the URLs are new and within the job's limit. Returns the first new idx.
   */
  async grow(jobId: string, found: FoundTarget[], rowBytes: number): Promise<number> {
    const job = await this.tx.q
      .selectFrom('batch_job')
      .select('targets_total')
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    const first = job.targets_total;
    if (found.length === 0) return first;
    for (const [n, part] of chunks(found, INSERT_CHUNK).entries()) {
      const base = first + n * INSERT_CHUNK;
      await this.tx.q
        .insertInto('batch_target')
        .values(
          part.map((t, i) => ({
            job_id: jobId,
            idx: base + i,
            url: t.url,
            host: hostOf(t.url),
            options: t.options,
            status: 'pending' as const,
            depth: t.depth,
            found_on: t.foundOn,
            canonical: t.canonical,
          })),
        )
        .execute();
      await this.tx.q
        .insertInto('crawl_seen')
        .values(part.map((t, i) => ({ job_id: jobId, canonical: t.canonical, idx: base + i })))
        .execute();
    }
    await this.tx.q
      .updateTable('batch_job')
      .set({
        targets_total: sql`targets_total + ${found.length}`,
        row_bytes: sql`row_bytes + ${rowBytes}`,
      })
      .where('id', '=', jobId)
      .execute();
    return first;
  }

  /** The first of the job's pages (other than idx) read with this body, if any. */
  async sameBody(jobId: string, digest: string, idx: number): Promise<number | undefined> {
    const row = await this.tx.q
      .selectFrom('batch_target')
      .select('idx')
      .where('job_id', '=', jobId)
      .where('digest', '=', digest)
      .where('idx', '!=', idx)
      .orderBy('idx')
      .limit(1)
      .executeTakeFirst();
    return row?.idx;
  }
}
