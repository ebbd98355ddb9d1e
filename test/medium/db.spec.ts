import { lockJob, type BatchJob, type Dcache } from '../../src/dcache';
import { TestDb, describeEachBackend } from '../support/backends';

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
