import { INSTANCE_LOST, JobLifecycle, SERVER_RESTARTED, type JobDraft } from '../../src/batch/job-lifecycle';
import type { JobRecovery } from '../../src/batch/job-recovery';
import { JobSignals } from '../../src/batch/job-signals';
import type { JobStatus, RestartPolicy, TargetStatus } from '../../src/common/job-status';
import type { BatchStore, Dcache } from '../../src/dcache';
import { endCancelledTargets } from '../../src/batch/transitions/cancel';
import { ROWS_PER_STATEMENT } from '../../src/dcache';
import { describeEachBackend } from '../support/backends';
import { lifecycleOf } from '../support/lifecycle';
import { TestClock, waitUntil } from '../support/app';

/**
 * The job state machine on a bare in-memory database: no app, no runner, no HTTP. Every transition
 * is checked for its rows, its events, and the signals it sends (only after its commit).
 */
describeEachBackend('JobLifecycle', (db) => {
  const clock = new TestClock(5_000_000_000);
  const now = () => clock.now();
  const caller = { name: 'alice', callerClass: 'fleet' as const };
  const limits = { idemTtlS: 3600, callerLiveJobs: 10, totalLiveJobs: 100 };
  let d: Dcache;
  let store: BatchStore;
  let signals: JobSignals;
  let life: JobLifecycle;
  let recovery: JobRecovery;
  let heard: string[];

  const draft = (n: number, over: Partial<JobDraft> = {}): JobDraft => ({
    caller,
    idemKey: '',
    fingerprint: 'fp',
    onRestart: 'fail',
    targets: Array.from({ length: n }, (_, i) => ({ url: `http://a.test/${i}`, options: '{}' })),
    ...over,
  });
  const types = async (id: string) => (await d.reader.events.batchEvents(id, 0, 1000)).map((e) => e.type);
  const statuses = async (id: string) => (await store.batchTargets(id))!.map((t) => t.status);
  const ME = 'instance-a';
  const OTHER = 'instance-b';
  /** This instance claims the job's next pending target. */
  const start = async (id: string) => (await life.claim(id, ME, 1))?.targets;
  const done = (result = '{"x":1}') => ({ kind: 'done' as const, result });
  /** A done result holding a page, as the search index reads it. */
  const page = (words: string) =>
    done(JSON.stringify({ url: 'http://a.test/p', title: 'A page', content: `A page about ${words}.` }));
  const docs = async (id: string) =>
    (
      await d.kysely.selectFrom('search_doc').select('idx').where('job_id', '=', id).orderBy('idx').execute()
    ).map((r) => Number(r.idx));
  const failed = { kind: 'failed' as const, code: 'connect_error', message: 'reset', hint: 'try later' };

  beforeEach(async () => {
    d = await db.open(); // SQLite: a bare openDcache({ path: ':memory:' })
    store = d.batch;
    signals = new JobSignals();
    ({ life, recovery } = lifecycleOf(d, clock, signals));
    heard = [];
    signals.onSubmitted((id) => heard.push(`submitted:${id}`));
    signals.onCancelled((id) => heard.push(`cancelled:${id}`));
  });
  afterEach(() => d.close());

  describe('submit', () => {
    it('stores the job queued, every target pending and batch.queued, then signals', async () => {
      const { job, replayed } = await life.submit(draft(3), limits);
      expect(replayed).toBe(false);
      expect(job).toMatchObject({ status: 'queued', targetsTotal: 3, targetsDone: 0, createdAt: now() });
      expect(await statuses(job.id)).toEqual(['pending', 'pending', 'pending']);
      expect(await types(job.id)).toEqual(['batch.queued']);
      expect(heard).toEqual([`submitted:${job.id}`]);
    });

    it("targets stored failed: their events after batch.queued, in order; the webhook's queued behind the first", async () => {
      // Over a statement's worth of events and of deliveries.
      const targets = Array.from({ length: 1203 }, (_, i) => ({
        url: i % 4 === 0 ? `http://a.test/${i}` : `bad ${i}`,
        options: '{}',
        ...(i % 4 === 0 ? {} : { failed: { code: 'invalid_url', message: 'not a URL', hint: 'fix it' } }),
      }));
      const webhook = {
        url: 'http://hook.test/h',
        secret: 'whsec_x',
        events: ['batch.queued', 'target.failed'],
      };
      const { job } = await life.submit(draft(0, { targets, webhook }), limits);
      const events = await d.reader.events.batchEvents(job.id, 0, 5000);
      const failedIdx = targets.flatMap((t, i) => (t.failed ? [i] : []));
      expect(events.map((e) => [e.seq, e.type, (JSON.parse(e.data) as { idx?: number }).idx])).toEqual([
        [1, 'batch.queued', undefined],
        ...failedIdx.map((idx, k) => [k + 2, 'target.failed', idx]),
      ]);
      expect(job).toMatchObject({ status: 'queued', targetsDone: failedIdx.length });
      const deliveries = await d.kysely
        .selectFrom('batch_delivery')
        .select(['seq', 'type', 'due_at', 'payload'])
        .where('job_id', '=', job.id)
        .orderBy('seq')
        .execute();
      expect(deliveries.map((r) => [r.seq, r.type])).toEqual(events.map((e) => [e.seq, e.type]));
      // One due at once; each of the others waits for the one before it.
      expect(deliveries.filter((r) => r.due_at !== null).map((r) => r.seq)).toEqual([1]);
      for (const r of deliveries)
        expect(JSON.parse(r.payload)).toMatchObject({ seq: r.seq, type: r.type, job_id: job.id });
      // Each payload counts in the job's bytes, beside what the same job without a webhook holds.
      const bare = (await life.submit(draft(0, { targets }), limits)).job;
      const bytes = async (id: string) =>
        Number(
          (
            await d.kysely
              .selectFrom('batch_job')
              .select('row_bytes')
              .where('id', '=', id)
              .executeTakeFirstOrThrow()
          ).row_bytes,
        );
      const payloads = deliveries.reduce((n, r) => n + Buffer.byteLength(r.payload) + 128, 0);
      expect((await bytes(job.id)) - (await bytes(bare.id))).toBe(payloads);
    });

    it('replays the same key to the same job, writes nothing, signals nothing', async () => {
      const first = await life.submit(draft(2, { idemKey: 'k' }), limits);
      heard.length = 0;
      const again = await life.submit(draft(2, { idemKey: 'k' }), limits);
      expect(again).toMatchObject({ replayed: true, job: { id: first.job.id } });
      expect(await d.reader.jobs.batchJobCount()).toBe(1);
      expect(heard).toEqual([]);
      await expect(
        life.submit(draft(2, { idemKey: 'k', fingerprint: 'other' }), limits),
      ).rejects.toMatchObject({
        status: 409,
        code: 'idempotency_conflict',
      });
    });

    it('refuses past the live-job limits inside the transaction; a refused submit leaves no trace', async () => {
      await life.submit(draft(1), { ...limits, callerLiveJobs: 1 });
      heard.length = 0;
      await expect(life.submit(draft(1), { ...limits, callerLiveJobs: 1 })).rejects.toMatchObject({
        code: 'too_many_jobs',
      });
      await expect(life.submit(draft(1), { ...limits, totalLiveJobs: 1 })).rejects.toMatchObject({
        code: 'server_busy',
      });
      expect(await d.reader.jobs.batchJobCount()).toBe(1);
      expect(heard).toEqual([]);
    });
  });

  describe('running a job', () => {
    it('the first start makes the job running with batch.running; later starts add no event', async () => {
      const { job } = await life.submit(draft(2), limits);
      const woken = signals.nextEvent(job.id, 5000);
      expect(await start(job.id)).toHaveLength(1);
      expect(await woken).toBe(true);
      expect(await start(job.id)).toHaveLength(1);
      expect(await store.batchJob(job.id)).toMatchObject({ status: 'running', lease: now() });
      expect(await statuses(job.id)).toEqual(['running', 'running']);
      expect(await types(job.id)).toEqual(['batch.queued', 'batch.running']);
    });

    it.each<[string, ('done' | 'failed')[], JobStatus, string]>([
      ['all done', ['done', 'done'], 'done', ''],
      ['one failed', ['done', 'failed'], 'partial', ''],
      ['all failed', ['failed', 'failed'], 'failed', 'every target failed'],
    ])('%s (%j): the last result ends the job %s in the same transaction', async (_, results, end, error) => {
      const { job } = await life.submit(draft(2), limits);
      for (const [idx, r] of results.entries()) {
        await start(job.id);
        expect(
          await life.recordResult({
            jobId: job.id,
            idx: idx,
            holder: ME,
            outcome: r === 'done' ? done() : failed,
          }),
        ).toBe(true);
      }
      const after = (await store.batchJob(job.id))!;
      expect(after).toMatchObject({ status: end, error, targetsDone: 2 });
      expect(after.targetsFailed).toBe(results.filter((r) => r === 'failed').length);
      const ev = await types(job.id);
      expect(ev[ev.length - 1]).toBe(`batch.${end}`);
      expect(ev.filter((t) => t.startsWith('target.'))).toEqual(results.map((r) => `target.${r}`));
      const t = (await store.batchTargets(job.id))!;
      expect(t.find((x) => x.status === 'failed') ?? null).toEqual(
        results.includes('failed')
          ? expect.objectContaining({
              code: 'connect_error',
              error: 'reset',
              hint: 'try later',
              result: null,
            })
          : null,
      );
    });

    it('two instances writing results of several jobs together, in opposite orders, at once: no deadlock', async () => {
      const jobs: string[] = [];
      for (let j = 0; j < 6; j++) jobs.push((await life.submit(draft(2), limits)).job.id);
      for (const holder of [ME, OTHER]) {
        for (const id of jobs) expect(await life.claim(id, holder, 1)).toBeDefined();
      }
      const write = (holder: string, idx: number, order: string[]) =>
        life.recordResults(order.map((jobId) => ({ jobId, idx, holder, outcome: page('lighthouses') })));
      const [mine, theirs] = await Promise.all([write(ME, 0, jobs), write(OTHER, 1, [...jobs].reverse())]);
      expect(mine).toEqual(jobs.map(() => true));
      expect(theirs).toEqual(jobs.map(() => true));
      for (const id of jobs) expect((await store.batchJob(id))!.status).toBe('done');
      for (const id of jobs) expect(await docs(id)).toEqual([0, 1]);
    });

    it('a page is found by search only with its written result: a refused one leaves no document', async () => {
      const { job } = await life.submit(draft(3), limits);
      await start(job.id);
      // Another instance's result for a target it does not hold, in the same group as a written one.
      expect(
        await life.recordResults([
          { jobId: job.id, idx: 0, holder: OTHER, outcome: page('ferries') },
          { jobId: job.id, idx: 0, holder: ME, outcome: page('ferries') },
        ]),
      ).toEqual([false, true]);
      expect(await docs(job.id)).toEqual([0]);
      await start(job.id);
      expect(
        await life.recordResult({ jobId: job.id, idx: 1, holder: OTHER, outcome: page('harbours') }),
      ).toBe(false);
      expect(await docs(job.id)).toEqual([0]);
      await life.cancel(job.id);
      expect(await life.recordResult({ jobId: job.id, idx: 1, holder: ME, outcome: page('harbours') })).toBe(
        false,
      );
      expect(await docs(job.id)).toEqual([0]);
    });

    it('a result for a job that is not running is discarded (lost work stays lost)', async () => {
      const { job } = await life.submit(draft(2), limits);
      await start(job.id);
      await life.cancel(job.id);
      expect(await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done() })).toBe(false);
      expect(await start(job.id)).toBeUndefined();
      expect(await statuses(job.id)).toEqual(['cancelled', 'cancelled']);
      expect(await types(job.id)).toEqual(['batch.queued', 'batch.running', 'batch.cancelled']);
      expect(await life.recordResult({ jobId: 'no-such-job', idx: 0, holder: ME, outcome: done() })).toBe(
        false,
      );
    });

    it('the job must be running as the result is written, even when the target is still held', async () => {
      const { job } = await life.submit(draft(2), limits);
      await start(job.id);
      // The job ends without its target being taken back (not a path sift takes: the write guards it).
      await store.setBatchJobStatus(job.id, 'failed', '', now());
      expect(await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done() })).toBe(false);
      expect(await statuses(job.id)).toEqual(['running', 'pending']);
      expect((await store.batchJob(job.id))!.targetsDone).toBe(0);
    });
  });

  describe('cancel', () => {
    it('running and pending targets end cancelled, finished ones are kept; batch.cancelled; signals after commit', async () => {
      const { job } = await life.submit(draft(3), limits);
      await start(job.id);
      await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done() });
      await start(job.id);
      heard.length = 0;
      const out = await life.cancel(job.id);
      expect(out).toMatchObject({
        changed: true,
        job: { status: 'cancelled', targetsDone: 1, targetsCancelled: 2 },
      });
      expect(await statuses(job.id)).toEqual(['done', 'cancelled', 'cancelled']);
      expect((await d.reader.events.batchEvents(job.id, 0, 100)).pop()).toMatchObject({
        type: 'batch.cancelled',
        data: '{"targets_done":1,"targets_cancelled":2}',
      });
      expect(heard).toEqual([`cancelled:${job.id}`]);
    });

    it('cancelling again changes nothing; an ended job is 409; a missing one is undefined', async () => {
      const { job } = await life.submit(draft(1), limits);
      await life.cancel(job.id);
      heard.length = 0;
      expect(await life.cancel(job.id)).toMatchObject({ changed: false, job: { status: 'cancelled' } });
      expect(heard).toEqual([]);
      const other = await life.submit(draft(1), limits);
      await start(other.job.id);
      await life.recordResult({ jobId: other.job.id, idx: 0, holder: ME, outcome: done() });
      await expect(life.cancel(other.job.id)).rejects.toMatchObject({ status: 409, code: 'not_cancellable' });
      expect(await life.cancel('nope')).toBeUndefined();
    });

    it('a job of several slices: its answer counts every target, and every one ends cancelled', async () => {
      const n = ROWS_PER_STATEMENT * 2 + 7;
      const { job } = await life.submit(draft(n), limits);
      await start(job.id);
      await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done() });
      await start(job.id);
      const out = await life.cancel(job.id);
      expect(out).toMatchObject({ job: { status: 'cancelled', targetsDone: 1, targetsCancelled: n - 1 } });
      // The answer waits for the targets a while at most (ENDING_WAIT_MS); they end after it.
      await waitUntil(
        async () => (await d.db.read.jobs.cancelledUnfinished(10)).length === 0 || undefined,
        'every target of the cancelled job ended',
      );
      const after = await store.batchTargets(job.id);
      expect(after!.filter((t) => t.status === 'cancelled')).toHaveLength(n - 1);
      expect(await store.batchJob(job.id)).toMatchObject({ targetsDone: 1, targetsCancelled: n - 1 });
      expect(await d.db.read.jobs.cancelledUnfinished(10)).toEqual([]);
    });

    it('a cancel that committed but whose process ended before its targets: no claim, then ended', async () => {
      const { job } = await life.submit(draft(5), limits);
      await start(job.id);
      // The cancel's own transaction committed (status, counts, event); its targets did not end.
      await store.setBatchJobStatus(job.id, 'cancelled', '', now());
      expect(await life.claim(job.id, ME, 5)).toBeUndefined();
      expect(await d.db.read.jobs.cancelledUnfinished(10)).toEqual([job.id]);
      await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done() });
      expect(await endCancelledTargets(d.db, job.id, now())).toBe(5);
      expect(await statuses(job.id)).toEqual(Array(5).fill('cancelled'));
      expect(await d.db.read.jobs.cancelledUnfinished(10)).toEqual([]);
      expect(await endCancelledTargets(d.db, job.id, now())).toBe(0);
    });

    it('a job that is not cancelled keeps its targets', async () => {
      const { job } = await life.submit(draft(2), limits);
      expect(await endCancelledTargets(d.db, job.id, now())).toBe(0);
      expect(await statuses(job.id)).toEqual(['pending', 'pending']);
    });
  });

  describe('after a restart, by policy', () => {
    /** A done target's result: a page, which search indexes. */
    const PAGE = '{"url":"http://a.test/0","title":"T","content":"the keeper logs ships"}';
    const docs = async (id: string) =>
      (await d.kysely.selectFrom('search_doc').select('idx').where('job_id', '=', id).execute()).length;

    /** A job as a crash left it: queued, or running with targets in every state. */
    async function leftBehind(policy: RestartPolicy, running: boolean): Promise<string> {
      const { job } = await life.submit(draft(4, { onRestart: policy }), limits);
      if (!running) return job.id;
      const ends: (TargetStatus | 'running')[] = ['done', 'running', 'failed', 'pending'];
      for (const [idx, end] of ends.entries()) {
        if (end === 'pending') continue;
        await start(job.id);
        if (end !== 'running')
          await life.recordResult({
            jobId: job.id,
            idx: idx,
            holder: ME,
            outcome: end === 'done' ? done(PAGE) : failed,
          });
      }
      return job.id;
    }

    it('fail: queued and running jobs fail with server_restarted; finished results are kept', async () => {
      const queued = await leftBehind('fail', false);
      const running = await leftBehind('fail', true);
      clock.t += 60_000;
      expect(await recovery.afterRestart()).toEqual({ failed: 2, requeued: 0, resumed: 0 });
      for (const id of [queued, running]) {
        expect(await store.batchJob(id)).toMatchObject({
          status: 'failed',
          error: SERVER_RESTARTED,
          lease: now(),
        });
        expect((await types(id)).pop()).toBe('batch.failed');
      }
      const t = (await store.batchTargets(running))!;
      expect(t.map((x) => x.status)).toEqual(['done', 'failed', 'failed', 'failed']);
      expect(t[0].result).toBe(PAGE);
      expect(t[1]).toMatchObject({ code: SERVER_RESTARTED, error: expect.stringMatching(/restarted/) });
      expect(t[2].code).toBe('connect_error'); // failed before the restart: its own error stays
      expect(await store.batchJob(running)).toMatchObject({ targetsDone: 4, targetsFailed: 3 });
    });

    it('retry: a queued job stays queued; a running one is queued again with every target pending', async () => {
      const queued = await leftBehind('retry', false);
      const running = await leftBehind('retry', true);
      expect(await docs(running)).toBe(1);
      expect(await recovery.afterRestart()).toEqual({ failed: 0, requeued: 1, resumed: 0 });
      // The result it runs again is gone from search with it.
      expect(await docs(running)).toBe(0);
      expect(await store.batchJob(queued)).toMatchObject({ status: 'queued' });
      expect(await types(queued)).toEqual(['batch.queued']);
      expect(await store.batchJob(running)).toMatchObject({
        status: 'queued',
        targetsDone: 0,
        targetsFailed: 0,
        nbytes: 0,
      });
      expect(await statuses(running)).toEqual(['pending', 'pending', 'pending', 'pending']);
      expect((await d.reader.events.batchEvents(running, 0, 100)).pop()).toMatchObject({
        type: 'batch.requeued',
        data: '{"policy":"retry","targets_reset":3}',
      });
    });

    it('resume: a running job keeps its finished targets; only those caught running start again', async () => {
      const queued = await leftBehind('resume', false);
      const running = await leftBehind('resume', true);
      expect(await recovery.afterRestart()).toEqual({ failed: 0, requeued: 0, resumed: 1 });
      expect(await docs(running)).toBe(1);
      expect(await store.batchJob(queued)).toMatchObject({ status: 'queued' });
      expect(await store.batchJob(running)).toMatchObject({
        status: 'running',
        targetsDone: 2,
        targetsFailed: 1,
      });
      expect(await statuses(running)).toEqual(['done', 'pending', 'failed', 'pending']);
      expect((await d.reader.events.batchEvents(running, 0, 100)).pop()).toMatchObject({
        type: 'batch.requeued',
        data: '{"policy":"resume","targets_reset":1}',
      });
    });

    it('ended jobs are left as they are', async () => {
      const { job } = await life.submit(draft(1, { onRestart: 'retry' }), limits);
      await start(job.id);
      await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done() });
      const before = await store.batchJob(job.id);
      clock.t += 60_000;
      await recovery.afterRestart();
      expect(await store.batchJob(job.id)).toEqual(before);
    });
  });

  it('at shutdown, the targets this instance holds go back to pending; another instance keeps its own', async () => {
    const { job } = await life.submit(draft(4), limits);
    await start(job.id);
    await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done() });
    await start(job.id);
    expect((await life.claim(job.id, OTHER, 1))!.targets).toEqual([expect.objectContaining({ idx: 2 })]);
    expect(await recovery.returnInFlight(job.id, ME)).toBe(1);
    expect(await statuses(job.id)).toEqual(['done', 'pending', 'running', 'pending']);
    expect(await store.batchJob(job.id)).toMatchObject({ status: 'running' });
  });

  it('targets an instance will not run go back to pending: only those named it holds, with no event', async () => {
    const { job } = await life.submit(draft(3), limits);
    expect((await life.claim(job.id, ME, 3))!.targets).toHaveLength(3);
    const before = await types(job.id);
    expect(await recovery.returnHeld(job.id, OTHER, [0, 1, 2])).toBe(0);
    expect(await recovery.returnHeld(job.id, ME, [0, 2])).toBe(2);
    expect(await statuses(job.id)).toEqual(['pending', 'running', 'pending']);
    expect(await types(job.id)).toEqual(before);
    // Claimed again, as any pending target is.
    expect((await life.claim(job.id, OTHER, 3))!.targets.map((t) => t.idx)).toEqual([0, 2]);
  });

  describe('claims', () => {
    it('a host is given no more than its limit of running targets, over all jobs and instances', async () => {
      const urls = [
        'http://a.test/1',
        'http://b.test/1',
        'http://A.test:80/2',
        'http://a.test/3',
        'http://b.test/2',
      ];
      const one = await life.submit(
        { ...draft(0), targets: urls.map((url) => ({ url, options: '{}' })) },
        limits,
      );
      const two = await life.submit(draft(2), limits); // a.test/0 and a.test/1
      // Two per host: ME takes a.test/1, b.test/1, A.test:80/2 (the same host), b.test/2.
      expect((await life.claim(one.job.id, ME, 10, 2))!.targets.map((t) => t.idx)).toEqual([0, 1, 2, 4]);
      // a.test is full: the other job's targets wait, although it has pending ones.
      expect(await life.claim(two.job.id, OTHER, 10, 2)).toEqual({ targets: [], more: true });
      expect(await life.recordResult({ jobId: one.job.id, idx: 0, holder: ME, outcome: done() })).toBe(true);
      expect((await life.claim(two.job.id, OTHER, 10, 2))!.targets.map((t) => t.idx)).toEqual([0]);
      expect(await life.claim(one.job.id, ME, 10, 2)).toEqual({ targets: [], more: true }); // a.test/3
    });

    it('a target is held by one instance at a time; only its holder records its result', async () => {
      const { job } = await life.submit(draft(5), limits);
      const a = (await life.claim(job.id, ME, 2))!.targets.map((t) => t.idx);
      const b = (await life.claim(job.id, OTHER, 10))!.targets.map((t) => t.idx);
      expect([a, b]).toEqual([
        [0, 1],
        [2, 3, 4],
      ]);
      expect(await life.claim(job.id, 'third', 10)).toEqual({ targets: [], more: false });
      expect(await life.recordResult({ jobId: job.id, idx: 2, holder: ME, outcome: done() })).toBe(false); // OTHER holds it
      expect(await life.recordResult({ jobId: job.id, idx: 2, holder: OTHER, outcome: done() })).toBe(true);
      expect(await life.recordResult({ jobId: job.id, idx: 2, holder: OTHER, outcome: done() })).toBe(false); // once
      expect(await types(job.id)).toEqual(['batch.queued', 'batch.running', 'target.done']);
    });
  });

  describe('after the loss of an instance, by policy', () => {
    /** A running job whose targets 0 (done) and 1 are ME's, 2 the lost instance's, 3 pending. */
    async function shared(policy: RestartPolicy): Promise<string> {
      const { job } = await life.submit(draft(4, { onRestart: policy }), limits);
      await start(job.id);
      await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done('{"r":0}') });
      await start(job.id);
      await life.claim(job.id, LOST, 1);
      await d.db.transaction((tx) => tx.instances.registerInstance({ id: LOST, host: 'h', now: now() }));
      return job.id;
    }
    const LOST = 'instance-lost';

    it('fail: the job fails with instance_lost, finished results kept, and is recovered once', async () => {
      const id = await shared('fail');
      expect(await recovery.recoverLost(LOST)).toEqual({ failed: 1, requeued: 0, resumed: 0 });
      expect(await store.batchJob(id)).toMatchObject({ status: 'failed', error: INSTANCE_LOST });
      expect(await statuses(id)).toEqual(['done', 'failed', 'failed', 'failed']);
      expect((await store.batchTargets(id))![2].code).toBe(INSTANCE_LOST);
      expect((await types(id)).pop()).toBe('batch.failed');
      expect(await d.reader.instances.lostInstances(Number.MAX_SAFE_INTEGER)).not.toContain(LOST);
      expect(await recovery.recoverLost(LOST)).toEqual({ failed: 0, requeued: 0, resumed: 0 });
      expect((await types(id)).filter((t) => t === 'batch.failed')).toHaveLength(1);
    });

    it('retry: the job is queued again with every target pending', async () => {
      const id = await shared('retry');
      expect(await recovery.recoverLost(LOST)).toEqual({ failed: 0, requeued: 1, resumed: 0 });
      expect(await store.batchJob(id)).toMatchObject({ status: 'queued', targetsDone: 0 });
      expect(await statuses(id)).toEqual(['pending', 'pending', 'pending', 'pending']);
      expect(await life.recordResult({ jobId: id, idx: 1, holder: ME, outcome: done() })).toBe(false); // ME's fetch lost its claim
    });

    it("resume: only the lost instance's targets go back to pending; the job keeps running", async () => {
      const id = await shared('resume');
      expect(await recovery.recoverLost(LOST)).toEqual({ failed: 0, requeued: 0, resumed: 1 });
      expect(await store.batchJob(id)).toMatchObject({ status: 'running', targetsDone: 1 });
      expect(await statuses(id)).toEqual(['done', 'running', 'pending', 'pending']);
      expect((await d.reader.events.batchEvents(id, 0, 100)).pop()).toMatchObject({
        type: 'batch.requeued',
        data: JSON.stringify({ policy: 'resume', targets_reset: 1, instance: LOST }),
      });
      expect(await life.recordResult({ jobId: id, idx: 1, holder: ME, outcome: done() })).toBe(true); // ME still holds its own
    });
  });

  it('onCommit runs after COMMIT and never for a rolled-back transaction', async () => {
    const seen: string[] = [];
    await d.db.transaction(async (s) => {
      s.onCommit(() => seen.push('committed'));
      seen.push('inside');
    });
    await expect(
      d.db.transaction(async (s) => {
        s.onCommit(() => seen.push('rolled back'));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(seen).toEqual(['inside', 'committed']);
  });
});
