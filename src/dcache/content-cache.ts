import { hash } from 'node:crypto';
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { SizedLru } from '../common/sized-lru';
import type { Tables } from './schema';
import {
  dropBodyIfUnused,
  dropOrphans,
  metaBytes,
  putPostgres,
  putSqlite,
  type Put,
} from './cache.statements';

export interface CachedPage {
  key: string;
  digest: string;
  body: string;
  /** What the writer stored beside the body (the envelope without its content), as given. */
  meta: Record<string, unknown>;
  fetchedAt: number;
}

export interface ContentCacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  evictions: number;
}

export function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex');
}

/**
 * Content-addressed page cache: a key points at a body stored once by its SHA-256 digest. After
 * every put the least recently used keys are evicted until size() <= maxBytes; a body goes when no
 * key points at it any more. size() counts every stored byte that a page chooses: the bodies'
 * UTF-8 bytes, each body once, and each key's meta (its metadata and links, as JSON).
 */
export class ContentCache {
  private bytes = 0;
  private entries = 0;
  private useTick = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  /** Hits not yet written back: a hit costs no write; the order is saved before anything is evicted. */
  private readonly touched = new Map<string, number>();

  /**
   * Recently read pages kept decoded in memory (a byte-bounded LRU in Map order), so a hot page is
   * served without a database read. It holds copies of rows that exist; every change drops them.
   * Each counts its body and its meta (as the JSON it was read from).
   */
  private readonly hot: SizedLru<{ page: CachedPage; metaChars: number }>;
  private readonly pg: boolean;

  constructor(
    private readonly db: Kysely<Tables>,
    readonly maxBytes: number,
  ) {
    // A JavaScript string holds up to two bytes a character.
    this.hot = new SizedLru(
      Math.min(maxBytes, 64 * 1024 * 1024),
      (h) => (h.page.body.length + h.metaChars) * 2,
    );
    this.pg = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /** Reads the totals once at open; afterwards they are kept in step with every change. */
  async init(): Promise<void> {
    await this.recount();
  }

  private async recount(): Promise<void> {
    const b = await this.db
      .selectFrom('cache_body')
      .select(sql<number>`coalesce(sum(nbytes), 0)`.as('n'))
      .executeTakeFirstOrThrow();
    const e = await this.db
      .selectFrom('cache_entry')
      .select([
        sql<number>`count(*)`.as('n'),
        sql<number>`coalesce(max(last_used), 0)`.as('tick'),
        sql<number>`coalesce(sum(${metaBytes}), 0)`.as('meta'),
      ])
      .executeTakeFirstOrThrow();
    this.bytes = Number(b.n) + Number(e.meta);
    this.entries = Number(e.n);
    this.useTick = Math.max(this.useTick, Number(e.tick));
  }

  size(): number {
    return this.bytes;
  }

  stats(): ContentCacheStats {
    return {
      entries: this.entries,
      bytes: this.bytes,
      maxBytes: this.maxBytes,
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
    };
  }

  /** The page under key if it was fetched at or after minFetchedAt; a hit marks it recently used. */
  async get(key: string, minFetchedAt = 0): Promise<CachedPage | undefined> {
    const found = await this.lookup(key, minFetchedAt);
    return found?.fresh ? found.page : undefined;
  }

  /**
   * The page under key, fresh (fetched at or after minFetchedAt: a hit, marked recently used) or
   * stale (counted a miss: what a conditional request may revalidate).
   */
  async lookup(key: string, minFetchedAt = 0): Promise<{ page: CachedPage; fresh: boolean } | undefined> {
    const page = await this.read(key);
    if (!page || page.fetchedAt < minFetchedAt) {
      this.misses++;
      return page && { page, fresh: false };
    }
    this.hits++;
    this.touched.set(key, this.nextTick());
    return { page, fresh: true };
  }

  private async read(key: string): Promise<CachedPage | undefined> {
    const warm = this.hot.get(key)?.page;
    if (warm)
      return { key, digest: warm.digest, body: warm.body, meta: warm.meta, fetchedAt: warm.fetchedAt };
    const row = await this.db
      .selectFrom('cache_entry as e')
      .innerJoin('cache_body as b', 'b.digest', 'e.digest')
      .select(['e.key', 'e.digest', 'e.meta', 'e.fetched_at', 'b.body'])
      .where('e.key', '=', key)
      .executeTakeFirst();
    if (!row) return undefined;
    const page: CachedPage = {
      key: row.key,
      digest: row.digest,
      body: row.body,
      meta: JSON.parse(row.meta) as Record<string, unknown>,
      fetchedAt: row.fetched_at,
    };
    this.hot.set(page.key, { page, metaChars: row.meta.length });
    return page;
  }

  /** Stores body under key (replacing what the key held), then evicts to the budget. Returns the digest. */
  async put(key: string, body: string, meta: Record<string, unknown>, fetchedAt: number): Promise<string> {
    const digest = sha256Hex(body);
    const nbytes = Buffer.byteLength(body, 'utf8');
    this.hot.delete(key);
    const entry = {
      key,
      digest,
      meta: JSON.stringify(meta),
      fetched_at: fetchedAt,
      last_used: this.nextTick(),
    };
    const stored = { nbytes, metaBytes: Buffer.byteLength(entry.meta, 'utf8') };
    try {
      if (this.pg) {
        // One statement, committed on its own; eviction, when the budget is passed, is a second.
        this.stored(key, stored, await putPostgres(this.db, { entry, body, nbytes }));
        if (this.bytes > this.maxBytes) await this.db.transaction().execute((trx) => this.evictToBudget(trx));
      } else {
        await this.db.transaction().execute(async (trx) => {
          const put = await putSqlite(trx, { entry, body, nbytes });
          if (put.old !== undefined && put.old !== digest) put.freed = await dropBodyIfUnused(trx, put.old);
          this.stored(key, stored, put);
          await this.evictToBudget(trx);
        });
      }
    } catch (err) {
      this.hot.clear();
      await this.recount();
      throw err;
    }
    return digest;
  }

  /** Keeps the totals in step with a put that committed (or will, with the transaction it is in). */
  private stored(key: string, size: { nbytes: number; metaBytes: number }, put: Put): void {
    if (put.inserted) this.bytes += size.nbytes;
    this.bytes += size.metaBytes - put.oldMeta - put.freed;
    if (put.old === undefined) this.entries++;
    this.touched.delete(key);
  }

  /** Evicts least recently used keys, in the transaction given, until size() <= maxBytes. */
  private async evictToBudget(trx: Kysely<Tables>): Promise<void> {
    if (this.bytes <= this.maxBytes) return;
    await this.flushTouches(trx);
    while (this.bytes > this.maxBytes && this.entries > 0) await this.evictOne(trx);
  }

  /**
   * Recency: milliseconds, kept strictly increasing here. As a clock reading it orders the uses of
   * several instances sharing one database too.
   */
  private nextTick(): number {
    this.useTick = Math.max(this.useTick + 1, Date.now());
    return this.useTick;
  }

  /**
   * Evicts least recently used keys until size() <= maxBytes; returns how many. With several
   * instances on one database (PostgreSQL) the bodies no key points at go first, and the total is
   * read afresh: each instance counts only its own puts between two of these (the sweeper runs one
   * every minute).
   */
  async evict(): Promise<number> {
    const before = this.evictions;
    if (this.pg) {
      await dropOrphans(this.db);
      await this.recount();
    }
    if (this.bytes <= this.maxBytes) return 0;
    try {
      await this.db.transaction().execute((trx) => this.evictToBudget(trx));
    } catch (err) {
      await this.recount();
      throw err;
    }
    return this.evictions - before;
  }

  /** Writes the recency of hits back, so LRU order holds across eviction and restarts. */
  async flushTouches(db: Kysely<Tables> = this.db): Promise<void> {
    if (this.touched.size === 0) return;
    const batch = [...this.touched];
    this.touched.clear();
    const write = async (trx: Kysely<Tables>) => {
      for (const [key, tick] of batch) {
        await trx.updateTable('cache_entry').set({ last_used: tick }).where('key', '=', key).execute();
      }
    };
    if (db.isTransaction) await write(db);
    else await db.transaction().execute(write);
  }

  private async evictOne(trx: Kysely<Tables>): Promise<void> {
    const lru = await trx
      .selectFrom('cache_entry')
      .select(['key', 'digest', metaBytes.as('meta_bytes')])
      .orderBy('last_used')
      .limit(1)
      .executeTakeFirst();
    if (!lru) {
      this.entries = 0;
      return;
    }
    await trx.deleteFrom('cache_entry').where('key', '=', lru.key).execute();
    this.hot.delete(lru.key);
    this.entries--;
    this.evictions++;
    this.bytes -= Number(lru.meta_bytes) + (await dropBodyIfUnused(trx, lru.digest));
  }
}
