// The content cache's statements: a put (three statements on SQLite, one on PostgreSQL), and the
// drops of bodies no key points at. ContentCache keeps the byte totals and the order of use.
import { sql, type Kysely } from 'kysely';
import type { Tables } from './schema';

/**
 * What a put did: the key's digest before (undefined for a new key) and the UTF-8 bytes of the
 * meta it held, whether the body is new, the bytes of a replaced body dropped.
 */
export interface Put {
  old: string | undefined;
  oldMeta: number;
  inserted: boolean;
  freed: number;
}

export interface CacheEntryRow {
  key: string;
  digest: string;
  meta: string;
  fetched_at: number;
  last_used: number;
}

/** One page to store: its key row, its body and the body's size in bytes. */
export interface CacheRow {
  entry: CacheEntryRow;
  body: string;
  nbytes: number;
}

/** A key's stored fields, in UTF-8 bytes (both dialects have octet_length). */
export const metaBytes = sql<number>`octet_length(meta)`;

/** The key's old digest (undefined for a new key), the body, then the key: three statements. */
export async function putSqlite(trx: Kysely<Tables>, row: CacheRow): Promise<Put> {
  const { entry, body, nbytes } = row;
  const old = await trx
    .selectFrom('cache_entry')
    .select(['digest', metaBytes.as('meta_bytes')])
    .where('key', '=', entry.key)
    .executeTakeFirst();
  const r = await trx
    .insertInto('cache_body')
    .values({ digest: entry.digest, body, nbytes })
    .onConflict((oc) => oc.column('digest').doNothing())
    .executeTakeFirst();
  await trx
    .insertInto('cache_entry')
    .values(entry)
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => ({
        digest: eb.ref('excluded.digest'),
        meta: eb.ref('excluded.meta'),
        fetched_at: eb.ref('excluded.fetched_at'),
        last_used: eb.ref('excluded.last_used'),
      })),
    )
    .execute();
  return {
    old: old?.digest,
    oldMeta: Number(old?.meta_bytes ?? 0),
    inserted: Number(r.numInsertedOrUpdatedRows) > 0,
    freed: 0,
  };
}

/**
 * The same in one statement, with the drop of the body the key pointed at when no other key
 * does: PostgreSQL runs data-modifying WITH clauses once each, all on the snapshot from before the
 * statement (so `old` is the key's digest before, and the other keys are those that are not this
 * one). A round trip per page, and no transaction, where there were three.
 */
export async function putPostgres(db: Kysely<Tables>, row: CacheRow): Promise<Put> {
  const { entry, body, nbytes } = row;
  const { rows } = await sql<{
    old: string | null;
    old_meta: number | null;
    inserted: number;
    freed: number;
  }>`
    WITH old AS (SELECT digest, octet_length(meta) AS meta_bytes FROM cache_entry WHERE key = ${entry.key}),
    body AS (
      INSERT INTO cache_body (digest, body, nbytes) VALUES (${entry.digest}, ${body}, ${nbytes})
      ON CONFLICT (digest) DO NOTHING RETURNING 1
    ),
    entry AS (
      INSERT INTO cache_entry (key, digest, meta, fetched_at, last_used)
      VALUES (${entry.key}, ${entry.digest}, ${entry.meta}, ${entry.fetched_at}, ${entry.last_used})
      ON CONFLICT (key) DO UPDATE SET digest = excluded.digest, meta = excluded.meta,
        fetched_at = excluded.fetched_at, last_used = excluded.last_used
    ),
    dropped AS (
      DELETE FROM cache_body AS b
      WHERE b.digest IN (SELECT digest FROM old) AND b.digest <> ${entry.digest}
        AND NOT EXISTS (SELECT 1 FROM cache_entry AS e WHERE e.digest = b.digest AND e.key <> ${entry.key})
      RETURNING b.nbytes
    )
    SELECT (SELECT digest FROM old) AS old, (SELECT meta_bytes FROM old) AS old_meta,
      (SELECT count(*) FROM body) AS inserted,
      (SELECT coalesce(sum(nbytes), 0) FROM dropped) AS freed`.execute(db);
  const r = rows[0];
  return {
    old: r.old ?? undefined,
    oldMeta: Number(r.old_meta ?? 0),
    inserted: Number(r.inserted) > 0,
    freed: Number(r.freed),
  };
}

/**
 * PostgreSQL: deletes the bodies no key points at. Two instances replacing one key at once each
 * drop the body they read as the key's old one, and the body written between them by neither.
 * (A put writes its body and its key in one statement: a body is never committed before its key.)
 */
export async function dropOrphans(db: Kysely<Tables>): Promise<void> {
  await db
    .deleteFrom('cache_body as b')
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('cache_entry as e').select('e.key').whereRef('e.digest', '=', 'b.digest')),
      ),
    )
    .execute();
}

/** Deletes the body when no key points at it; returns the bytes freed. */
export async function dropBodyIfUnused(trx: Kysely<Tables>, digest: string): Promise<number> {
  const r = await trx
    .deleteFrom('cache_body')
    .where('digest', '=', digest)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('cache_entry').select('key').where('digest', '=', digest))))
    .returning('nbytes')
    .executeTakeFirst();
  return r ? r.nbytes : 0;
}
