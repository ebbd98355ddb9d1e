import { sql } from 'kysely';
import { sha256Hex, type Dcache } from '../../src/dcache';
import { describeEachBackend, TestDb } from '../support/backends';
import { waitUntil } from '../support/wait';

/** What the database holds: each body's bytes once, and each key's meta. */
async function storedBytes(d: Dcache): Promise<number> {
  const bodies = await d.kysely
    .selectFrom('cache_body')
    .select(sql<number>`coalesce(sum(nbytes), 0)`.as('n'))
    .executeTakeFirstOrThrow();
  const metas = await d.kysely
    .selectFrom('cache_entry')
    .select(sql<number>`coalesce(sum(octet_length(meta)), 0)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(bodies.n) + Number(metas.n);
}

/** An empty meta, `{}`, as every key stores it: two bytes. */
const EMPTY_META = 2;

describeEachBackend('ContentCache', (db) => {
  let d: Dcache;
  afterEach(() => d.close());

  it("stores equal bodies once and counts them once in size(), each key's meta beside", async () => {
    d = await db.open({ maxBytes: 1000 });
    const body = 'héllo wörld';
    const a = await d.cache.put('k1', body, { title: 'a' }, 100);
    const b = await d.cache.put('k2', body, { title: 'b' }, 101);
    expect(a).toBe(sha256Hex(body));
    expect(b).toBe(a);
    expect(d.cache.size()).toBe(Buffer.byteLength(body) + 2 * Buffer.byteLength('{"title":"a"}'));
    const rows = await d.kysely.selectFrom('cache_body').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(await d.cache.get('k2')).toMatchObject({ body, digest: a, meta: { title: 'b' }, fetchedAt: 101 });
  });

  it('evicts least recently used keys until size() <= maxBytes after every put', async () => {
    d = await db.open({ maxBytes: 30 });
    await d.cache.put('a', 'a'.repeat(8), {}, 1);
    await d.cache.put('b', 'b'.repeat(8), {}, 1);
    await d.cache.put('c', 'c'.repeat(8), {}, 1);
    expect(d.cache.size()).toBe(3 * (8 + EMPTY_META));
    await d.cache.get('a'); // a is now the most recently used; b is the oldest
    await d.cache.put('d', 'd'.repeat(8), {}, 1);
    expect(d.cache.size()).toBeLessThanOrEqual(30);
    expect(await d.cache.get('b')).toBeUndefined();
    expect(await d.cache.get('a')).toBeDefined();
    expect(await d.cache.get('c')).toBeDefined();
    expect(await d.cache.get('d')).toBeDefined();
    for (let i = 0; i < 20; i++) {
      await d.cache.put(`k${i}`, `${i}`.repeat(7 + (i % 5)), {}, 1);
      expect(d.cache.size()).toBeLessThanOrEqual(30);
      expect(await storedBytes(d)).toBe(d.cache.size());
    }
  });

  it('keeps a shared body until its last key goes', async () => {
    d = await db.open({ maxBytes: 25 });
    await d.cache.put('a', 'x'.repeat(10), {}, 1);
    await d.cache.put('b', 'x'.repeat(10), {}, 1);
    await d.cache.put('c', 'y'.repeat(10), {}, 1);
    // 30 bytes of bodies and 8 of meta > 25: a goes (body kept for b), then b goes.
    await d.cache.put('d', 'z'.repeat(10), {}, 1);
    expect(await d.cache.get('a')).toBeUndefined();
    expect(await d.cache.get('b')).toBeUndefined();
    expect(d.cache.size()).toBe(2 * (10 + EMPTY_META));
    expect(d.cache.stats().evictions).toBe(2);
  });

  it('replacing a key releases its old body', async () => {
    d = await db.open({ maxBytes: 100 });
    await d.cache.put('a', 'old body', {}, 1);
    await d.cache.put('a', 'new', {}, 2);
    expect(d.cache.size()).toBe(3 + EMPTY_META);
    expect(await d.cache.get('a')).toMatchObject({ body: 'new', fetchedAt: 2 });
    expect(d.cache.stats().entries).toBe(1);
    const bodies = await d.kysely.selectFrom('cache_body').select('body').execute();
    expect(bodies.map((r) => r.body)).toEqual(['new']);
  });

  it('replacing a key keeps an old body another key points at, and a body put again', async () => {
    d = await db.open({ maxBytes: 100 });
    await d.cache.put('a', 'shared', {}, 1);
    await d.cache.put('b', 'shared', {}, 1);
    await d.cache.put('a', 'own', {}, 2);
    await d.cache.put('b', 'shared', {}, 3); // the same body again: nothing to drop
    expect(await d.cache.get('b')).toMatchObject({ body: 'shared', fetchedAt: 3 });
    const bodies = await d.kysely
      .selectFrom('cache_body')
      .select(['body', 'nbytes'])
      .orderBy('body')
      .execute();
    expect(bodies.map((r) => r.body)).toEqual(['own', 'shared']);
    expect(d.cache.size()).toBe(bodies.reduce((n, r) => n + Number(r.nbytes), 0) + 2 * EMPTY_META);
    await d.cache.put('b', 'changed', {}, 4);
    expect(
      (await d.kysely.selectFrom('cache_body').select('body').orderBy('body').execute()).map((r) => r.body),
    ).toEqual(['changed', 'own']);
    expect(d.cache.size()).toBe(Buffer.byteLength('changed') + Buffer.byteLength('own') + 2 * EMPTY_META);
    expect(await storedBytes(d)).toBe(d.cache.size());
    expect(d.cache.stats().entries).toBe(2);
  });

  it('honours a freshness bound and counts hits and misses', async () => {
    d = await db.open({ maxBytes: 100 });
    await d.cache.put('a', 'body', {}, 50);
    expect(await d.cache.get('a', 50)).toBeDefined();
    expect(await d.cache.get('a', 51)).toBeUndefined();
    expect(await d.cache.get('zzz')).toBeUndefined();
    expect(await d.stats()).toMatchObject({
      entries: 1,
      bytes: 4 + EMPTY_META,
      maxBytes: 100,
      hits: 1,
      misses: 2,
      evictions: 0,
    });
  });

  it("a key's meta (metadata, links) counts toward the budget and evicts like a body", async () => {
    d = await db.open({ maxBytes: 10_000 });
    const links = Array.from({ length: 100 }, (_, i) => ({
      url: `https://example.com/${'p'.repeat(40)}/${i}`,
      text: `${i}`,
    }));
    const meta = { links };
    const metaBytes = Buffer.byteLength(JSON.stringify(meta));
    await d.cache.put('a', 'x', meta, 1);
    expect(d.cache.size()).toBe(1 + metaBytes);
    await d.cache.put('b', 'y', meta, 1); // two metas pass 10,000 bytes: a goes
    expect(await d.cache.get('a')).toBeUndefined();
    expect(await d.cache.get('b')).toMatchObject({ body: 'y', meta });
    expect(d.cache.size()).toBe(1 + metaBytes);
    expect(await storedBytes(d)).toBe(d.cache.size());
    await d.cache.put('b', 'y', {}, 2); // replaced by a smaller meta: the difference is given back
    expect(d.cache.size()).toBe(1 + EMPTY_META);
  });

  it('the pages it keeps in memory weigh their meta too', async () => {
    let reads = 0;
    d = await db.open({
      maxBytes: 1024 * 1024,
      trace: (q) => void (/join "cache_body"/i.test(q) && reads++),
    });
    // 40 pages of tiny bodies and 20 KB of meta: 800 KB stored, within the budget; in memory
    // (two bytes a character) each weighs 40 KB, so at most 26 fit the 1 MiB the memory may hold.
    const meta = { links: [{ url: 'https://example.com/', text: 'm'.repeat(20_000) }] };
    for (let i = 0; i < 40; i++) await d.cache.put(`k${i}`, `body ${i}`, meta, 1);
    for (let i = 0; i < 40; i++) await d.cache.get(`k${i}`);
    reads = 0;
    for (let i = 0; i < 40; i++) expect(await d.cache.get(`k${i}`)).toMatchObject({ body: `body ${i}` });
    expect(reads).toBeGreaterThanOrEqual(40 - 26);
  });

  it('reads its totals and LRU order back from a reopened database', async () => {
    d = await db.open({ file: true, maxBytes: 100 });
    await d.cache.put('a', 'abcd', {}, 1);
    await d.cache.put('b', 'efghij', {}, 1);
    await d.cache.get('a');
    await d.close();
    d = await db.open({ file: true, keep: true, maxBytes: 10 });
    expect(d.cache.stats()).toMatchObject({ entries: 2, bytes: 10 + 2 * EMPTY_META });
    await d.cache.put('c', 'k', {}, 1);
    expect(await d.cache.get('b')).toBeUndefined();
    expect(await d.cache.get('a')).toBeDefined();
    expect(await d.cache.get('c')).toBeDefined();
  });
});

describe('ContentCache, two instances on one PostgreSQL database', () => {
  const db = new TestDb('postgres');
  beforeAll(() => db.setUp());
  afterAll(() => db.tearDown());

  it('a body left by two instances replacing one key at once goes at the next eviction', async () => {
    const a = await db.open({ maxBytes: 1000 });
    const b = await db.open({ maxBytes: 1000, keep: true });
    try {
      await a.cache.put('k', 'first body', {}, 1);
      // One instance's replacement, in flight: the key's row is held while the other's put begins.
      let commit!: () => void;
      const held = new Promise<void>((r) => (commit = r));
      let locked!: () => void;
      const holding = new Promise<void>((r) => (locked = r));
      const other = a.kysely.transaction().execute(async (trx) => {
        await trx
          .insertInto('cache_body')
          .values({ digest: sha256Hex('second body'), body: 'second body', nbytes: 11 })
          .execute();
        await trx
          .updateTable('cache_entry')
          .set({ digest: sha256Hex('second body') })
          .where('key', '=', 'k')
          .execute();
        locked();
        await held;
      });
      await holding;
      const put = b.cache.put('k', 'third body', {}, 2); // read the key as "first body", then waits
      // It is waiting once the server shows a session of the database blocked on a lock.
      await waitUntil(
        async () =>
          (
            await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(a.kysely)
          ).rows[0].n > 0 || undefined,
        "the second instance's put to wait for the key's row",
      );
      commit();
      await other;
      await put;
      const bodies = async () =>
        (await b.kysely.selectFrom('cache_body').select('body').orderBy('body').execute()).map((r) => r.body);
      expect(await bodies()).toEqual(['second body', 'third body']); // "second body": no key points at it
      await b.cache.evict();
      expect(await bodies()).toEqual(['third body']);
      expect(b.cache.size()).toBe(Buffer.byteLength('third body') + EMPTY_META);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
