import { JOB_STATUSES, REPLAYABLE_JOB_STATUSES, type JobStatus } from '../../src/common/job-status';
import type { EventType } from '../../src/common/job-status';
import { markInFlightFailed, type BatchJob, type BatchTarget, type Dcache } from '../../src/dcache';
import { describeEachBackend } from '../support/backends';

const T0 = 1_700_000_000;

function job(over: Partial<BatchJob> = {}): BatchJob {
  return {
    id: 'j1',
    caller: 'alice',
    callerClass: 'fleet',
    idemKey: '',
    status: 'queued',
    error: '',
    targetsTotal: 3,
    targetsDone: 0,
    createdAt: T0,
    lease: T0,
    nbytes: 0,
    ...over,
  };
}

function targets(jobId: string, n: number): BatchTarget[] {
  return Array.from({ length: n }, (_, i) => ({
    jobId,
    idx: i,
    url: `http://example.test/${i}`,
    options: '{}',
    status: 'pending',
    result: null,
    error: null,
    hint: null,
  }));
}

describeEachBackend('BatchStore', (db) => {
  let d: Dcache;
  beforeEach(async () => {
    d = await db.open();
  });
  afterEach(() => d.close());
  /** An event appended in a transaction of its own. */
  const appendEvent = (e: { jobId: string; type: EventType; at: number; data?: object }) =>
    d.db.transaction((tx) => tx.events.appendEvent(e));

  it('round-trips a job exactly as given', async () => {
    const j = job({ idemKey: 'k', status: 'running', error: 'x', targetsDone: 1, nbytes: 7, lease: T0 + 5 });
    await d.batch.createBatchJob(j);
    expect(await d.batch.batchJob('j1')).toMatchObject(j);
  });

  it('misses resolve to undefined and are counted per accessor', async () => {
    expect(await d.batch.batchJob('nope')).toBeUndefined();
    expect(await d.batch.batchTargets('nope')).toBeUndefined();
    expect(await d.batch.batchJobByIdem('alice', 'k', T0, 10)).toBeUndefined();
    await d.batch.touchBatchJob('nope', T0);
    await d.batch.setBatchJobStatus('nope', 'done', '', T0);
    await d.batch.updateBatchTarget('nope', 0, T0, 'done', 'r', null, null);
    const s = await d.stats();
    expect(s.storeMisses).toMatchObject({
      batchJob: 1,
      batchTargets: 1,
      batchJobByIdem: 1,
      touchBatchJob: 1,
      setBatchJobStatus: 1,
      updateBatchTarget: 1,
    });
  });

  it('a job with no targets yet reads as an empty list, not a miss', async () => {
    await d.batch.createBatchJob(job());
    expect(await d.batch.batchTargets('j1')).toEqual([]);
    expect(d.batch.misses.batchTargets).toBe(0);
  });

  it('failures reject with an Error instead of throwing', async () => {
    await d.batch.createBatchJob(job());
    await expect(d.batch.createBatchJob(job())).rejects.toMatchObject({
      message: expect.stringMatching(/unique/i),
    });
    await d.batch.putBatchTargets('j1', targets('j1', 2));
    await expect(d.batch.putBatchTargets('j1', targets('j1', 1))).rejects.toMatchObject({
      message: expect.stringMatching(/unique/i),
    });
    // the failed put changed nothing
    expect(await d.batch.batchTargets('j1')).toHaveLength(2);
  });

  describe('idempotency lookup', () => {
    it('finds a job while lease + ttl > now and not at exactly lease + ttl', async () => {
      await d.batch.createBatchJob(job({ idemKey: 'k', lease: T0 + 100 }));
      expect(await d.batch.batchJobByIdem('alice', 'k', T0 + 100 + 59, 60)).toBe('j1');
      expect(await d.batch.batchJobByIdem('alice', 'k', T0 + 100 + 60, 60)).toBeUndefined();
    });

    it('is scoped to the caller', async () => {
      await d.batch.createBatchJob(job({ idemKey: 'k' }));
      expect(await d.batch.batchJobByIdem('bob', 'k', T0, 60)).toBeUndefined();
      expect(await d.batch.batchJobByIdem('alice', 'other', T0, 60)).toBeUndefined();
    });

    it.each(REPLAYABLE_JOB_STATUSES)('returns a %s job', async (status) => {
      await d.batch.createBatchJob(job({ idemKey: 'k', status }));
      expect(await d.batch.batchJobByIdem('alice', 'k', T0, 60)).toBe('j1');
    });

    it.each(['failed', 'cancelled'] as const)('never returns a %s job', async (status) => {
      await d.batch.createBatchJob(job({ idemKey: 'k', status }));
      expect(await d.batch.batchJobByIdem('alice', 'k', T0, 60)).toBeUndefined();
    });

    it('returns the newest createdAt when several match', async () => {
      await d.batch.createBatchJob(job({ id: 'old', idemKey: 'k', createdAt: T0 }));
      await d.batch.createBatchJob(job({ id: 'new', idemKey: 'k', createdAt: T0 + 10 }));
      await d.batch.createBatchJob(job({ id: 'mid', idemKey: 'k', createdAt: T0 + 5 }));
      await d.batch.createBatchJob(
        job({ id: 'newest-failed', idemKey: 'k', createdAt: T0 + 20, status: 'failed' }),
      );
      expect(await d.batch.batchJobByIdem('alice', 'k', T0, 60)).toBe('new');
    });
  });

  it('counts live jobs per caller and in total', async () => {
    const statuses = JOB_STATUSES;
    for (const [i, status] of statuses.entries()) {
      await d.batch.createBatchJob(job({ id: `a${i}`, status }));
      await d.batch.createBatchJob(job({ id: `b${i}`, caller: 'bob', status }));
    }
    await d.batch.createBatchJob(job({ id: 'b-extra', caller: 'bob', status: 'queued' }));
    expect(await d.batch.liveBatchJobs('alice')).toBe(2);
    expect(await d.batch.liveBatchJobs('bob')).toBe(3);
    expect(await d.batch.liveBatchJobs('carol')).toBe(0);
    expect(await d.batch.liveBatchJobsTotal()).toBe(5);
  });

  it('returns targets in idx order whatever the insertion order', async () => {
    await d.batch.createBatchJob(job());
    const ts = targets('j1', 12).reverse();
    await d.batch.putBatchTargets('j1', ts);
    const got = await d.batch.batchTargets('j1');
    expect(got!.map((t) => t.idx)).toEqual([...Array(12).keys()]);
    expect(got![3]).toMatchObject({
      jobId: 'j1',
      url: 'http://example.test/3',
      status: 'pending',
      result: null,
    });
  });

  it('puts 10,000 targets in one call', async () => {
    await d.batch.createBatchJob(job({ targetsTotal: 10000 }));
    await d.batch.putBatchTargets('j1', targets('j1', 10000));
    const got = await d.batch.batchTargets('j1');
    expect(got).toHaveLength(10000);
    expect(got![9999].idx).toBe(9999);
  });

  describe('updateBatchTarget', () => {
    beforeEach(async () => {
      await d.batch.createBatchJob(job());
      await d.batch.putBatchTargets('j1', targets('j1', 3));
    });

    it('counts a target once as it enters done or failed, and sets the lease to now', async () => {
      await d.batch.updateBatchTarget('j1', 0, T0 + 1, 'running', null, null, null);
      expect(await d.batch.batchJob('j1')).toMatchObject({ targetsDone: 0, lease: T0 + 1 });
      await d.batch.updateBatchTarget('j1', 0, T0 + 2, 'done', 'abc', null, null);
      expect(await d.batch.batchJob('j1')).toMatchObject({ targetsDone: 1, lease: T0 + 2 });
      await d.batch.updateBatchTarget('j1', 0, T0 + 3, 'done', 'abc', null, null);
      await d.batch.updateBatchTarget('j1', 0, T0 + 4, 'failed', null, 'boom', 'retry');
      expect(await d.batch.batchJob('j1')).toMatchObject({ targetsDone: 1, targetsFailed: 1, lease: T0 + 4 });
      await d.batch.updateBatchTarget('j1', 1, T0 + 5, 'failed', null, 'boom', 'do this');
      expect(await d.batch.batchJob('j1')).toMatchObject({ targetsDone: 2, targetsFailed: 2, lease: T0 + 5 });
      const t = (await d.batch.batchTargets('j1'))![1];
      expect(t).toMatchObject({ status: 'failed', result: null, error: 'boom', hint: 'do this' });
    });

    it('keeps nbytes equal to the UTF-8 bytes of the stored results across rewrites', async () => {
      const euro = '€€€'; // 9 bytes, 3 UTF-16 units
      const emoji = 'a😀'; // 5 bytes
      await d.batch.updateBatchTarget('j1', 0, T0, 'done', euro, null, null);
      expect((await d.batch.batchJob('j1'))!.nbytes).toBe(9);
      await d.batch.updateBatchTarget('j1', 1, T0, 'done', emoji, null, null);
      expect((await d.batch.batchJob('j1'))!.nbytes).toBe(14);
      await d.batch.updateBatchTarget('j1', 0, T0, 'done', 'é', null, null);
      expect((await d.batch.batchJob('j1'))!.nbytes).toBe(2 + 5);
      await d.batch.updateBatchTarget('j1', 1, T0, 'failed', null, 'x', 'y');
      expect((await d.batch.batchJob('j1'))!.nbytes).toBe(2);
      const sum = (await d.batch.batchTargets('j1'))!.reduce(
        (n, t) => n + Buffer.byteLength(t.result ?? ''),
        0,
      );
      expect(sum).toBe(2);
      expect(await d.batch.batchNbytes()).toBe(2);
    });
  });

  describe('the lease', () => {
    beforeEach(async () => {
      await d.batch.createBatchJob(job({ lease: T0 }));
      await d.batch.putBatchTargets('j1', targets('j1', 2));
    });

    it('is set to now by every writer', async () => {
      await d.batch.touchBatchJob('j1', T0 + 10);
      expect((await d.batch.batchJob('j1'))!.lease).toBe(T0 + 10);
      await d.batch.setBatchJobStatus('j1', 'running', '', T0 + 20);
      expect(await d.batch.batchJob('j1')).toMatchObject({ lease: T0 + 20, status: 'running' });
      await d.batch.updateBatchTarget('j1', 0, T0 + 30, 'done', 'x', null, null);
      expect((await d.batch.batchJob('j1'))!.lease).toBe(T0 + 30);
      await d.batch.markInFlightFailed('server_restarted', T0 + 40);
      expect((await d.batch.batchJob('j1'))!.lease).toBe(T0 + 40);
    });

    it('is never changed by a reader', async () => {
      await d.batch.batchJob('j1');
      await d.batch.batchTargets('j1');
      await d.batch.batchJobByIdem('alice', '', T0 + 1000, 1);
      await d.batch.liveBatchJobs('alice');
      await d.batch.liveBatchJobsTotal();
      await d.batch.batchNbytes();
      await d.stats();
      expect((await d.batch.batchJob('j1'))!.lease).toBe(T0);
    });
  });

  it('sweep removes whole jobs with lease + ttl <= now, with their targets and events', async () => {
    await d.batch.createBatchJob(job({ id: 'stale', lease: T0, status: 'done' }));
    await d.batch.createBatchJob(job({ id: 'edge', lease: T0 + 1, status: 'done' }));
    await d.batch.createBatchJob(job({ id: 'fresh', lease: T0 + 2, status: 'done' }));
    for (const id of ['stale', 'edge', 'fresh']) {
      await d.batch.putBatchTargets(id, targets(id, 2));
      await appendEvent({ jobId: id, type: 'batch.queued', at: T0 });
    }
    expect(await d.batch.sweepBatch(T0 + 101, 100)).toBe(2);
    expect(await d.batch.batchJob('stale')).toBeUndefined();
    expect(await d.batch.batchJob('edge')).toBeUndefined();
    expect(await d.batch.batchJob('fresh')).toBeDefined();
    const left = await d.kysely.selectFrom('batch_target').select('job_id').distinct().execute();
    expect(left.map((r) => r.job_id)).toEqual(['fresh']);
    const events = await d.kysely.selectFrom('batch_event').select('job_id').distinct().execute();
    expect(events.map((r) => r.job_id)).toEqual(['fresh']);
    expect(await d.batch.sweepBatch(T0 + 101, 100)).toBe(0);
  });

  describe('evictBatchOldest', () => {
    async function finishedJob(id: string, lease: number, status: JobStatus, bytes: number) {
      await d.batch.createBatchJob(job({ id, lease, status, targetsTotal: 1 }));
      await d.batch.putBatchTargets(id, targets(id, 1));
      await d.batch.updateBatchTarget(id, 0, lease, 'done', 'x'.repeat(bytes), null, null);
      await d.batch.setBatchJobStatus(id, status, '', lease);
    }

    it('evicts whole jobs oldest lease first until within budget, never a live job', async () => {
      await finishedJob('live-oldest', T0, 'running', 100);
      await finishedJob('queued-old', T0 + 1, 'queued', 100);
      await finishedJob('done-2', T0 + 2, 'done', 100);
      await finishedJob('partial-3', T0 + 3, 'partial', 100);
      await finishedJob('done-4', T0 + 4, 'done', 100);
      expect(await d.batch.batchNbytes()).toBe(500);
      expect(await d.batch.evictBatchOldest(300)).toBe(2);
      expect(await d.batch.batchJob('done-2')).toBeUndefined();
      expect(await d.batch.batchJob('partial-3')).toBeUndefined();
      expect(await d.batch.batchJob('done-4')).toBeDefined();
      expect(await d.batch.batchTargets('done-2')).toBeUndefined();
      expect(await d.batch.batchNbytes()).toBe(300);
      // Only live jobs are left over the budget: nothing more can go.
      expect(await d.batch.evictBatchOldest(0)).toBe(1);
      expect(await d.batch.batchJob('live-oldest')).toBeDefined();
      expect(await d.batch.batchJob('queued-old')).toBeDefined();
      expect(await d.batch.batchNbytes()).toBe(200);
    });

    it('does nothing within budget', async () => {
      await finishedJob('a', T0, 'done', 10);
      expect(await d.batch.evictBatchOldest(10)).toBe(0);
      expect(await d.batch.batchJob('a')).toBeDefined();
    });
  });

  it('markInFlightFailed fails queued and running jobs whose policy is fail, and their unfinished targets', async () => {
    for (const [id, status, onRestart] of [
      ['q', 'queued', 'fail'],
      ['r', 'running', 'fail'],
      ['d', 'done', 'fail'],
      ['r-resume', 'running', 'resume'],
    ] as const) {
      await d.batch.createBatchJob(job({ id, status, onRestart, targetsTotal: 2 }));
      await d.batch.putBatchTargets(id, targets(id, 2));
      await appendEvent({ jobId: id, type: 'batch.queued', at: T0 });
    }
    await d.batch.updateBatchTarget('r', 0, T0, 'done', 'ok', null, null);
    expect(await d.batch.markInFlightFailed('server_restarted', T0 + 9)).toBe(2);
    expect(await d.batch.batchJob('q')).toMatchObject({
      status: 'failed',
      error: 'server_restarted',
      lease: T0 + 9,
    });
    expect(await d.batch.batchJob('r')).toMatchObject({
      status: 'failed',
      error: 'server_restarted',
      targetsDone: 2,
      targetsFailed: 1,
    });
    expect((await d.batch.batchJob('d'))!.status).toBe('done');
    expect((await d.batch.batchJob('r-resume'))!.status).toBe('running');
    const rt = (await d.batch.batchTargets('r'))!;
    expect(rt.map((t) => t.status)).toEqual(['done', 'failed']);
    expect(rt[1]).toMatchObject({ code: 'server_restarted', error: 'server_restarted', hint: null });
    // Nothing is live under the fail policy any more: a second call finds nothing.
    expect(await d.batch.markInFlightFailed('server_restarted', T0 + 10)).toBe(0);
  });

  it("the lifecycle's markInFlightFailed gives the failed targets its message and hint", async () => {
    await d.batch.createBatchJob(job({ id: 'r', status: 'running', onRestart: 'fail', targetsTotal: 2 }));
    await d.batch.putBatchTargets('r', targets('r', 2));
    const n = await d.db.transaction((tx) =>
      markInFlightFailed(tx, {
        reason: 'server_restarted',
        now: T0 + 9,
        message: 'restarted',
        hint: 'submit again',
      }),
    );
    expect(n).toBe(1);
    expect(await d.batch.batchJob('r')).toMatchObject({
      status: 'failed',
      error: 'server_restarted',
      lease: T0 + 9,
    });
    const rt = (await d.batch.batchTargets('r'))!;
    expect(rt[1]).toMatchObject({ code: 'server_restarted', error: 'restarted', hint: 'submit again' });
  });

  it('batchNbytes sums over all jobs and is not part of the content cache size', async () => {
    expect(await d.batch.batchNbytes()).toBe(0);
    await d.batch.createBatchJob(job({ id: 'a' }));
    await d.batch.createBatchJob(job({ id: 'b' }));
    await d.batch.putBatchTargets('a', targets('a', 1));
    await d.batch.putBatchTargets('b', targets('b', 1));
    await d.batch.updateBatchTarget('a', 0, T0, 'done', 'ü'.repeat(10), null, null);
    await d.batch.updateBatchTarget('b', 0, T0, 'done', 'abc', null, null);
    expect(await d.batch.batchNbytes()).toBe(23);
    expect(d.cache.size()).toBe(0);
    expect(await d.stats()).toMatchObject({ batchJobs: 2, batchBytes: 23, bytes: 0 });
  });

  it('appends events with gapless per-job sequence numbers', async () => {
    await d.batch.createBatchJob(job({ id: 'a' }));
    await d.batch.createBatchJob(job({ id: 'b' }));
    expect(await appendEvent({ jobId: 'a', type: 'batch.queued', at: T0 })).toMatchObject({ seq: 1 });
    expect(await appendEvent({ jobId: 'b', type: 'batch.queued', at: T0 })).toMatchObject({ seq: 1 });
    expect(await appendEvent({ jobId: 'a', type: 'batch.running', at: T0, data: { n: 1 } })).toMatchObject({
      seq: 2,
    });
    const ev = await d.reader.events.batchEvents('a', 1, 10);
    expect(ev).toEqual([{ jobId: 'a', seq: 2, type: 'batch.running', at: T0, data: '{"n":1}' }]);
  });

  it("an event's insert reads back the targets its job has left, after the transaction's own writes", async () => {
    await d.batch.createBatchJob(job({ targetsTotal: 2 }));
    await d.batch.putBatchTargets('j1', targets('j1', 2));
    expect(await appendEvent({ jobId: 'j1', type: 'batch.queued', at: T0 })).toEqual({
      seq: 1,
      left: 2,
    });
    const after = await d.db.transaction(async (tx) => {
      await tx.targets.updateBatchTarget({ jobId: 'j1', idx: 0, now: T0, status: 'done', result: 'ok' });
      const first = await tx.events.appendEvent({
        jobId: 'j1',
        type: 'target.done',
        at: T0,
        data: { idx: 0 },
      });
      await tx.targets.updateBatchTarget({
        jobId: 'j1',
        idx: 1,
        now: T0,
        status: 'failed',
        error: 'x',
        hint: 'y',
      });
      const second = await tx.events.appendEvent({
        jobId: 'j1',
        type: 'target.failed',
        at: T0,
        data: { idx: 1 },
      });
      return [first, second];
    });
    expect(after).toEqual([
      { seq: 2, left: 1 },
      { seq: 3, left: 0 },
    ]);
  });

  it('a transaction commits a status and its event together, or neither', async () => {
    await d.batch.createBatchJob(job());
    await expect(
      d.db.transaction(async (tx) => {
        await tx.jobs.setBatchJobStatus({ id: 'j1', status: 'running', now: T0 + 1 });
        await tx.events.appendEvent({ jobId: 'j1', type: 'batch.running', at: T0 + 1 });
        throw new Error('crash between');
      }),
    ).rejects.toThrow('crash between');
    expect(await d.batch.batchJob('j1')).toMatchObject({ status: 'queued', lease: T0 });
    expect(await d.reader.events.batchEvents('j1', 0, 10)).toEqual([]);
  });
});
