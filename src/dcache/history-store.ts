import { lockPageHistory } from './locks';
import type { Db } from './db';
import type { PageVersionTable } from './schema';

/** One version of a page in a caller's history. */
export interface PageVersion {
  /** Unix milliseconds: first seen, last seen. */
  at: number;
  seenAt: number;
  digest: string;
  /** The URL answered 404 or 410. */
  gone: boolean;
  /** Its markdown ('' on versions older than the latest). */
  markdown: string;
}

/**
 * Each caller's history of the pages it asked changes of: a version a content (a fetch that finds
 * the latest again only moves its seen_at), at most `keep` versions a page, the latest one alone
 * keeping its markdown. Every call names the owner, so no caller reads another's.
 */
export class HistoryStore {
  constructor(private readonly db: Db) {}

  /**
   * Records the page as this fetch found it and returns what `compare` makes of it against the
   * version the fetch before found (a fetch that finds the same content compares with the latest
   * as it was before this fetch). `by` names a fetch that may be tried again (a job's target): a
   * second try that finds the version its first try recorded is told what the first was, so a
   * change is reported once even when the first try's result was lost (its instance died).
   */
  async record<C>(
    owner: string,
    page: string,
    now: { atMs: number; digest: string; gone: boolean; markdown: string; by?: string },
    keep: number,
    compare: (before: PageVersion | undefined) => C,
  ): Promise<C> {
    return this.db.transaction(async (tx) => {
      await lockPageHistory(tx, owner, page);
      const last = await tx.q
        .selectFrom('page_version')
        .selectAll()
        .where('owner', '=', owner)
        .where('page', '=', page)
        .orderBy('at', 'desc')
        .limit(1)
        .executeTakeFirst();
      const before = last && versionOf(last);
      const by = now.by ?? '';
      if (before && before.digest === now.digest && before.gone === now.gone) {
        if (by && last.by_fetch === by) return JSON.parse(last.changes) as C;
        const told = compare(before);
        await tx.q
          .updateTable('page_version')
          .set({ seen_at: Math.max(now.atMs, before.seenAt), by_fetch: by, changes: JSON.stringify(told) })
          .where('owner', '=', owner)
          .where('page', '=', page)
          .where('at', '=', before.at)
          .execute();
        return told;
      }
      const told = compare(before);
      const at = before ? Math.max(now.atMs, before.at + 1) : now.atMs;
      if (before) {
        await tx.q
          .updateTable('page_version')
          .set({ markdown: '' })
          .where('owner', '=', owner)
          .where('page', '=', page)
          .where('at', '=', before.at)
          .execute();
      }
      await tx.q
        .insertInto('page_version')
        .values({
          owner,
          page,
          at,
          seen_at: at,
          digest: now.digest,
          gone: now.gone ? 1 : 0,
          markdown: now.markdown,
          by_fetch: by,
          changes: JSON.stringify(told),
        })
        .execute();
      const oldest = await tx.q
        .selectFrom('page_version')
        .select('at')
        .where('owner', '=', owner)
        .where('page', '=', page)
        .orderBy('at', 'desc')
        .offset(keep)
        .limit(1)
        .executeTakeFirst();
      if (oldest) {
        await tx.q
          .deleteFrom('page_version')
          .where('owner', '=', owner)
          .where('page', '=', page)
          .where('at', '<=', Number(oldest.at))
          .execute();
      }
      return told;
    });
  }

  /** The page's versions, newest first. */
  async versions(owner: string, page: string): Promise<PageVersion[]> {
    const rows = await this.db.q
      .selectFrom('page_version')
      .selectAll()
      .where('owner', '=', owner)
      .where('page', '=', page)
      .orderBy('at', 'desc')
      .execute();
    return rows.map(versionOf);
  }

  /** Forgets versions last seen before `beforeMs` (a page's whole history, once its latest is). */
  async sweep(beforeMs: number): Promise<number> {
    const r = await this.db.q.deleteFrom('page_version').where('seen_at', '<', beforeMs).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

// (PostgreSQL's BIGINT comes back as a string.)
function versionOf(r: PageVersionTable): PageVersion {
  return {
    at: Number(r.at),
    seenAt: Number(r.seen_at),
    digest: r.digest,
    gone: r.gone === 1,
    markdown: r.markdown,
  };
}
