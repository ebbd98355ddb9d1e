import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { lockJob, type BatchJob, type Dcache } from '../../src/dcache';
import { TestDb, describeEachBackend } from '../support/backends';
import { ROOT, ensureBuilt } from '../support/process';

const T0 = 1_700_000_000;

const job = (id: string): BatchJob => ({
  id,
  caller: 'alice',
  callerClass: 'fleet',
  idemKey: '',
  status: 'queued',
  error: '',
  targetsTotal: 0,
  targetsDone: 0,
  createdAt: T0,
  lease: T0,
  nbytes: 0,
});

describeEachBackend('Db transactions', (db) => {
  let d: Dcache;
  beforeAll(() => ensureBuilt(), 180_000);
  beforeEach(async () => {
    d = await db.open();
    await d.batch.createBatchJob(job('a'));
  });
  afterEach(() => d.close());

  it('refuses a transaction opened inside another, and the outer one still commits', async () => {
    await d.db.transaction(async (tx) => {
      await tx.jobs.touchBatchJob('a', T0 + 1);
      await expect(d.db.transaction((inner) => inner.jobs.touchBatchJob('a', T0 + 2))).rejects.toThrow(
        /inside a transaction/,
      );
      expect(d.db.inTransaction).toBe(true);
    });
    expect(d.db.inTransaction).toBe(false);
    expect((await d.batch.batchJob('a'))!.lease).toBe(T0 + 1);
  });

  it('refuses it too for a durable one: durable is never dropped by a silent join', async () => {
    await d.db.transaction(async () => {
      await expect(d.db.transaction(async () => 1, { durable: true })).rejects.toThrow(
        /inside a transaction/,
      );
    });
  });

  it('leaves no promise tracked once its transactions have ended', async () => {
    // A promise's callback runs under an async id of its own only while promise hooks are on: on
    // Node 20, while an AsyncLocalStorage is in use. jest has them on for its own use, so the
    // store is opened by a plain Node process on the built code (built in beforeAll).
    const at = db.backend === 'sqlite' ? { path: ':memory:' } : { url: db.url };
    const script = `
      const { executionAsyncId } = require('node:async_hooks');
      const { openDcache } = require('./dist/src/dcache');
      const tracked = () => Promise.resolve().then(() => executionAsyncId() !== 0);
      (async () => {
        const d = await openDcache(${JSON.stringify(at)});
        const seen = [await tracked()];
        const inside = [];
        await Promise.all([1, 2].map(() => d.db.transaction(async () => inside.push(await tracked()))));
        await d.db.transaction(async () => { throw new Error('abort'); }).catch(() => undefined);
        seen.push(await tracked());
        const nested = await d.db.transaction(() => d.db.transaction(async () => 1).catch((e) => e.message));
        seen.push(await tracked());
        await d.close();
        console.log(JSON.stringify({ seen, inside, nested }));
      })();`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT });
    const out = JSON.parse(stdout) as { seen: boolean[]; inside: boolean[]; nested: string };
    expect(out.seen).toEqual([false, false, false]);
    // The check itself is on inside each transaction, the next one's included.
    expect(out.nested).toMatch(/inside a transaction/);
    // (Node 20 tracks promises inside a transaction; Node 24 tracks none at all.)
    expect(out.inside).toHaveLength(2);
  });

  it('onCommit runs after COMMIT and never after a rollback', async () => {
    const seen: string[] = [];
    await d.db.transaction(async (tx) => {
      tx.onCommit(() => seen.push('committed'));
      expect(seen).toEqual([]);
    });
    await expect(
      d.db.transaction(async (tx) => {
        tx.onCommit(() => seen.push('rolled back'));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(seen).toEqual(['committed']);
  });

  it('a failure that is not a deadlock is not tried again', async () => {
    await d.batch.createBatchJob(job('dup'));
    expect(await d.batch.batchJob('dup')).toBeDefined();
    let attempts = 0;
    const err = await d.db
      .transaction(async (tx) => {
        attempts++;
        await tx.jobs.createBatchJob(job('dup'));
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(String(err)).toMatch(/unique|duplicate/i);
    expect(attempts).toBe(1);
  });
});

describe('Db transactions on postgres: deadlocks', () => {
  const db = new TestDb('postgres');
  let d: Dcache;
  beforeAll(() => db.setUp());
  afterAll(() => db.tearDown());
  beforeEach(async () => {
    d = await db.open();
    await d.batch.createBatchJob(job('a'));
    await d.batch.createBatchJob(job('b'));
  });
  afterEach(() => d.close());

  it('a transaction still refuses one inside it after another one beside it has ended', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const long = d.db.transaction(async (tx) => {
      await tx.jobs.touchBatchJob('a', T0 + 1);
      await held;
      await expect(d.db.transaction(async () => 1)).rejects.toThrow(/inside a transaction/);
      expect(d.db.inTransaction).toBe(true);
      return tx.jobs.touchBatchJob('a', T0 + 3);
    });
    await d.db.transaction((tx) => tx.jobs.touchBatchJob('b', T0 + 2));
    release();
    await long;
    expect(d.db.inTransaction).toBe(false);
    expect((await d.batch.batchJob('a'))!.lease).toBe(T0 + 3);
  });

  it('two transactions locking two jobs in opposite orders: one is tried again, both commit', async () => {
    let attempts = 0;
    const heard: string[] = [];
    // Both first attempts hold their first row before either asks for its second: a deadlock.
    let arrived = 0;
    let release!: () => void;
    const both = new Promise<void>((r) => (release = r));
    const run = (first: string, second: string) =>
      d.db.transaction(async (tx) => {
        const attempt = ++attempts;
        tx.onCommit(() => heard.push(`${first}${second}:${attempt}`));
        await lockJob(tx, first);
        await tx.jobs.touchBatchJob(first, T0 + attempt);
        if (attempt <= 2) {
          if (++arrived === 2) release();
          await both;
        }
        await lockJob(tx, second);
        await tx.jobs.touchBatchJob(second, T0 + attempt);
        return attempt;
      });
    const [ab, ba] = await Promise.all([run('a', 'b'), run('b', 'a')]);
    expect(attempts).toBe(3);
    // One of the two first attempts committed; the other was rolled back and ran again as the third.
    expect([ab, ba].sort()).toEqual([ab === 3 ? ba : ab, 3].sort());
    // Only committed attempts were announced: the deadlocked one's onCommit was dropped.
    expect(heard.sort()).toEqual([`ab:${ab}`, `ba:${ba}`].sort());
    // The last commit (the third attempt) wrote both leases.
    expect((await d.batch.batchJob('a'))!.lease).toBe(T0 + 3);
    expect((await d.batch.batchJob('b'))!.lease).toBe(T0 + 3);
  }, 20_000);
});
