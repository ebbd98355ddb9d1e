import { sql } from 'kysely';
import { sha256Hex, type Dcache } from '../../src/dcache';
import { describeEachBackend, TestDb } from '../support/backends';
import { waitUntil } from '../support/wait';

describeEachBackend('ContentCache', (db) => {
  let d: Dcache;
  afterEach(() => d.close());

  it('stores equal bodies once and counts them once in size()', async () => {
    d = await db.open({ maxBytes: 1000 });
    const body = 'héllo wörld';
    const a = await d.cache.put('k1', body, { title: 'a' }, 100);
    const b = await d.cache.put('k2', body, { title: 'b' }, 101);
    expect(a).toBe(sha256Hex(body));
    expect(b).toBe(a);
    expect(d.cache.size()).toBe(Buffer.byteLength(body));
    const rows = await d.db.selectFrom('cache_body').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(await d.cache.get('k2')).toMatchObject({ body, digest: a, meta: { title: 'b' }, fetchedAt: 101 });
  });

  it('evicts least recently used keys until size() <= maxBytes after every put', async () => {
    d = await db.open({ maxBytes: 30 });
    await d.cache.put('a', 'a'.repeat(10), {}, 1);
    await d.cache.put('b', 'b'.repeat(10), {}, 1);
    await d.cache.put('c', 'c'.repeat(10), {}, 1);
    expect(d.cache.size()).toBe(30);
    await d.cache.get('a'); // a is now the most recently used; b is the oldest
    await d.cache.put('d', 'd'.repeat(10), {}, 1);
    expect(d.cache.size()).toBeLessThanOrEqual(30);
    expect(await d.cache.get('b')).toBeUndefined();
    expect(await d.cache.get('a')).toBeDefined();
    expect(await d.cache.get('c')).toBeDefined();
    expect(await d.cache.get('d')).toBeDefined();
    for (let i = 0; i < 20; i++) {
      await d.cache.put(`k${i}`, `${i}`.repeat(7 + (i % 5)), {}, 1);
      expect(d.cache.size()).toBeLessThanOrEqual(30);
      const real = await d.db
        .selectFrom('cache_body')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('nbytes'), eb.val(0)).as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(real.n)).toBe(d.cache.size());
    }
  });

  it('keeps a shared body until its last key goes', async () => {
    d = await db.open({ maxBytes: 25 });
    await d.cache.put('a', 'x'.repeat(10), {}, 1);
    await d.cache.put('b', 'x'.repeat(10), {}, 1);
    await d.cache.put('c', 'y'.repeat(10), {}, 1);
    await d.cache.put('d', 'z'.repeat(10), {}, 1); // 30 > 25: a goes (body kept for b), then b goes
    expect(await d.cache.get('a')).toBeUndefined();
    expect(await d.cache.get('b')).toBeUndefined();
    expect(d.cache.size()).toBe(20);
    expect(d.cache.stats().evictions).toBe(2);
  });

  it('replacing a key releases its old body', async () => {
    d = await db.open({ maxBytes: 100 });
    await d.cache.put('a', 'old body', {}, 1);
    await d.cache.put('a', 'new', {}, 2);
    expect(d.cache.size()).toBe(3);
    expect(await d.cache.get('a')).toMatchObject({ body: 'new', fetchedAt: 2 });
    expect(d.cache.stats().entries).toBe(1);
    const bodies = await d.db.selectFrom('cache_body').select('body').execute();
    expect(bodies.map((r) => r.body)).toEqual(['new']);
  });

  it('replacing a key keeps an old body another key points at, and a body put again', async () => {
    d = await db.open({ maxBytes: 100 });
    await d.cache.put('a', 'shared', {}, 1);
    await d.cache.put('b', 'shared', {}, 1);
    await d.cache.put('a', 'own', {}, 2);
    await d.cache.put('b', 'shared', {}, 3); // the same body again: nothing to drop
    expect(await d.cache.get('b')).toMatchObject({ body: 'shared', fetchedAt: 3 });
    const bodies = await d.db.selectFrom('cache_body').select(['body', 'nbytes']).orderBy('body').execute();
    expect(bodies.map((r) => r.body)).toEqual(['own', 'shared']);
    expect(d.cache.size()).toBe(bodies.reduce((n, r) => n + Number(r.nbytes), 0));
    await d.cache.put('b', 'changed', {}, 4);
    expect(
      (await d.db.selectFrom('cache_body').select('body').orderBy('body').execute()).map((r) => r.body),
    ).toEqual(['changed', 'own']);
    expect(d.cache.size()).toBe(Buffer.byteLength('changed') + Buffer.byteLength('own'));
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
      bytes: 4,
      maxBytes: 100,
      hits: 1,
      misses: 2,
      evictions: 0,
    });
  });

  it('reads its totals and LRU order back from a reopened database', async () => {
    d = await db.open({ file: true, maxBytes: 100 });
    await d.cache.put('a', 'abcd', {}, 1);
    await d.cache.put('b', 'efghij', {}, 1);
    await d.cache.get('a');
    await d.close();
    d = await db.open({ file: true, keep: true, maxBytes: 10 });
    expect(d.cache.stats()).toMatchObject({ entries: 2, bytes: 10 });
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
      const other = a.db.transaction().execute(async (trx) => {
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
              WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(a.db)
          ).rows[0].n > 0 || undefined,
        "the second instance's put to wait for the key's row",
      );
      commit();
      await other;
      await put;
      const bodies = async () =>
        (await b.db.selectFrom('cache_body').select('body').orderBy('body').execute()).map((r) => r.body);
      expect(await bodies()).toEqual(['second body', 'third body']); // "second body": no key points at it
      await b.cache.evict();
      expect(await bodies()).toEqual(['third body']);
      expect(b.cache.size()).toBe(Buffer.byteLength('third body'));
    } finally {
      await a.close();
      await b.close();
    }
  });
});
