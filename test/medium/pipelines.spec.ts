import { JobLifecycle, type JobDraft } from '../../src/batch/job-lifecycle';
import { JobSignals } from '../../src/batch/job-signals';
import { DEFAULT_WEBHOOK_EVENTS, EVENT_TYPES } from '../../src/common/job-status';
import { markDuplicates } from '../../src/batch/dedupe';
import { lockDeliveries, type BatchStore, type Dcache, type DeliveryWrite } from '../../src/dcache';
import type { JobRecovery } from '../../src/batch/job-recovery';
import { describeEachBackend } from '../support/backends';
import { TestClock } from '../support/app';
import { lifecycleOf } from '../support/lifecycle';

/**
 * Retry jobs, duplicates, purge, per-job TTL and the webhook outbox, on the store and the
 * lifecycle alone, on SQLite and on PostgreSQL.
 */
describeEachBackend('pipelines in the store', (db) => {
  const clock = new TestClock(6_000_000_000);
  const now = () => clock.now();
  const caller = { name: 'alice', callerClass: 'fleet' as const };
  const limits = { idemTtlS: 3600, callerLiveJobs: 10, totalLiveJobs: 100 };
  const hook = { url: 'http://hooks.test/in', secret: `whsec_${'A'.repeat(32)}`, events: [...EVENT_TYPES] };
  const ME = 'instance-a';
  const OTHER = 'instance-b';
  let d: Dcache;
  let store: BatchStore;
  let life: JobLifecycle;
  let recovery: JobRecovery;
  const finishDelivery = (w: DeliveryWrite) => d.db.transaction((tx) => tx.deliveries.finishDelivery(w));
  const finishAndTakeNext = (w: DeliveryWrite, at: number) =>
    d.db.transaction((tx) => tx.deliveries.finishAndTakeNext(w, at));
  const redeliver = (jobId: string, at: number, all: boolean) =>
    d.db.transaction((tx) => tx.deliveries.redeliver(jobId, at, all));

  const draft = (urls: string[], over: Partial<JobDraft> = {}): JobDraft => ({
    caller,
    idemKey: '',
    fingerprint: 'fp',
    onRestart: 'fail',
    targets: markDuplicates(urls.map((url) => ({ url, options: '{}' }))),
    ...over,
  });
  const done = (result = '{"x":1}') => ({ kind: 'done' as const, result });
  const failed = { kind: 'failed' as const, code: 'connect_error', message: 'reset', hint: 'try later' };
  /** Claims every claimable target of the job for ME and records `outcome(idx)` for each. */
  async function runAll(id: string, outcome: (idx: number) => ReturnType<typeof done> | typeof failed) {
    for (;;) {
      const c = await life.claim(id, ME, 100);
      if (!c || c.targets.length === 0) return;
      for (const t of c.targets)
        await life.recordResult({ jobId: id, idx: t.idx, holder: ME, outcome: outcome(t.idx) });
    }
  }
  /** Every row, in every table, that belongs to the job. */
  async function rowsOf(id: string): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const table of ['batch_target', 'batch_event', 'batch_webhook', 'batch_delivery'] as const) {
      out[table] = (
        await d.kysely.selectFrom(table).select('job_id').where('job_id', '=', id).execute()
      ).length;
    }
    out.batch_job = (
      await d.kysely.selectFrom('batch_job').select('id').where('id', '=', id).execute()
    ).length;
    return out;
  }

  beforeEach(async () => {
    d = await db.open();
    store = d.batch;
    ({ life, recovery } = lifecycleOf(d, clock, new JobSignals()));
  });
  afterEach(() => d.close());

  describe('retry', () => {
    it("a child job of the parent's failed targets, each knowing its parent_idx; refused while live or with nothing failed", async () => {
      const urls = Array.from({ length: 10 }, (_, i) => `http://a.test/${i}`);
      const { job: parent } = await life.submit(draft(urls, { ttlS: 600, webhook: hook }), limits);
      await expect(life.retry(parent.id, caller, '', limits)).rejects.toMatchObject({
        status: 409,
        code: 'not_retryable',
      });
      await runAll(parent.id, (i) => ([2, 5, 7].includes(i) ? failed : done()));
      expect(await store.batchJob(parent.id)).toMatchObject({ status: 'partial', targetsFailed: 3 });

      const { job: child, replayed } = (await life.retry(parent.id, caller, 'k1', limits))!;
      expect(replayed).toBe(false);
      expect(child).toMatchObject({ parentId: parent.id, targetsTotal: 3, status: 'queued', ttlS: 600 });
      expect(await d.reader.deliveries.webhookOf(child.id)).toEqual(hook);
      const targets = (await store.batchTargets(child.id))!;
      expect(targets.map((t) => [t.idx, t.url, t.parentIdx])).toEqual([
        [0, 'http://a.test/2', 2],
        [1, 'http://a.test/5', 5],
        [2, 'http://a.test/7', 7],
      ]);
      // The same key again: the same child, nothing written.
      expect(await life.retry(parent.id, caller, 'k1', limits)).toMatchObject({
        replayed: true,
        job: { id: child.id },
      });
      expect(await d.reader.jobs.batchJobCount()).toBe(2);
      // The key of a retry is not the key of a submit of the same parent.
      await expect(life.submit(draft(['http://a.test/0'], { idemKey: 'k1' }), limits)).rejects.toMatchObject({
        code: 'idempotency_conflict',
      });

      await runAll(child.id, () => done());
      expect(await store.batchJob(child.id)).toMatchObject({ status: 'done', targetsFailed: 0 });
      await expect(life.retry(child.id, caller, '', limits)).rejects.toMatchObject({ code: 'not_retryable' });
    });

    it('invalid URLs are not retried', async () => {
      const { job } = await life.submit(
        draft(['ftp://x'], {
          targets: [
            { url: 'ftp://x', options: '{}', failed: { code: 'invalid_url', message: 'm', hint: 'h' } },
          ],
        }),
        limits,
      );
      expect(job.status).toBe('failed');
      await expect(life.retry(job.id, caller, '', limits)).rejects.toMatchObject({ code: 'not_retryable' });
    });
  });

  describe('duplicates', () => {
    it('targets with the same URL and options are claimed once and all get its result, each with its event', async () => {
      const urls = ['http://a.test/x', 'http://a.test/x#frag', 'http://a.test/y', 'http://a.test/x'];
      const { job } = await life.submit(draft(urls), limits);
      expect((await store.batchTargets(job.id))!.map((t) => t.dupOf ?? null)).toEqual([null, 0, null, 0]);
      const c = (await life.claim(job.id, ME, 100))!;
      expect(c.targets.map((t) => t.idx)).toEqual([0, 2]);
      expect(c.more).toBe(false);
      await life.recordResult({ jobId: job.id, idx: 0, holder: ME, outcome: done('{"page":"x"}') });
      const targets = (await store.batchTargets(job.id))!;
      expect(targets.map((t) => [t.status, t.result])).toEqual([
        ['done', '{"page":"x"}'],
        ['done', '{"page":"x"}'],
        ['running', null],
        ['done', '{"page":"x"}'],
      ]);
      await life.recordResult({ jobId: job.id, idx: 2, holder: ME, outcome: failed });
      expect(await store.batchJob(job.id)).toMatchObject({
        status: 'partial',
        targetsDone: 4,
        targetsFailed: 1,
      });
      const events = await d.reader.events.batchEvents(job.id, 0, 100);
      expect(events.filter((e) => e.type === 'target.done').map((e) => JSON.parse(e.data).idx)).toEqual([
        0, 1, 3,
      ]);
    });

    it('options that differ are fetched apart', () => {
      const marked = markDuplicates([
        { url: 'http://a.test/', options: '{"format":"text","max_age_s":0}' },
        { url: 'http://a.test/', options: '{"max_age_s":0,"format":"text"}' },
        { url: 'http://a.test/', options: '{"format":"html"}' },
      ]);
      expect(marked.map((t) => t.dupOf)).toEqual([undefined, 0, undefined]);
    });
  });

  describe('ignore_invalid_urls', () => {
    it('failed targets stored failed with their event; a job of only those ends at once', async () => {
      const bad = {
        code: 'invalid_url',
        message: 'the URL must be an absolute http or https URL',
        hint: 'fix it',
      };
      const { job } = await life.submit(
        draft([], {
          targets: [
            { url: 'http://a.test/ok', options: '{}' },
            { url: 'nope', options: '{}', failed: bad },
          ],
        }),
        limits,
      );
      expect(job).toMatchObject({ status: 'queued', targetsDone: 1, targetsFailed: 1 });
      expect((await d.reader.events.batchEvents(job.id, 0, 10)).map((e) => [e.type, e.data])).toEqual([
        ['batch.queued', '{"targets_total":2}'],
        ['target.failed', '{"idx":1,"code":"invalid_url"}'],
      ]);
      await runAll(job.id, () => done());
      expect(await store.batchJob(job.id)).toMatchObject({ status: 'partial' });
    });
  });

  describe('retention', () => {
    it("the sweeper honours each job's own TTL exactly: kept at lease + ttl - 1, gone at lease + ttl", async () => {
      const { job: own } = await life.submit(draft(['http://a.test/1'], { ttlS: 120 }), limits);
      const { job: dflt } = await life.submit(draft(['http://a.test/2']), limits);
      const lease = now();
      await life.cancel(own.id);
      await life.cancel(dflt.id);
      expect(await store.sweepBatch(lease + 119, 300)).toBe(0);
      expect(await store.sweepBatch(lease + 120, 300)).toBe(1);
      expect(await store.batchJob(own.id)).toBeUndefined();
      expect(await store.sweepBatch(lease + 299, 300)).toBe(0);
      expect(await store.sweepBatch(lease + 300, 300)).toBe(1);
      expect(await store.batchJob(dflt.id)).toBeUndefined();
    });

    it('purge deletes an ended job with every row of it; a live one is 409 not_finished', async () => {
      const { job } = await life.submit(
        draft(['http://a.test/1', 'http://a.test/2'], { webhook: hook }),
        limits,
      );
      await expect(life.purge(job.id)).rejects.toMatchObject({ status: 409, code: 'not_finished' });
      await runAll(job.id, () => done());
      const before = await rowsOf(job.id);
      expect(before).toMatchObject({ batch_job: 1, batch_target: 2, batch_webhook: 1 });
      expect(before.batch_event).toBeGreaterThan(3);
      expect(before.batch_delivery).toBe(before.batch_event);
      const { job: other } = await life.submit(draft(['http://a.test/3']), limits);
      expect(await life.purge(job.id)).toBe(true);
      expect(await rowsOf(job.id)).toEqual({
        batch_job: 0,
        batch_target: 0,
        batch_event: 0,
        batch_webhook: 0,
        batch_delivery: 0,
      });
      expect(await store.batchJob(other.id)).toBeDefined();
      expect(await life.purge(job.id)).toBeUndefined();
    });
  });

  describe('the webhook outbox', () => {
    it('a delivery row is written with each event of the types asked for, in its transaction', async () => {
      const { job } = await life.submit(
        draft(['http://a.test/1'], { webhook: { ...hook, events: [...DEFAULT_WEBHOOK_EVENTS] } }),
        limits,
      );
      await runAll(job.id, () => done());
      const events = await d.reader.events.batchEvents(job.id, 0, 100);
      const deliveries = await d.reader.deliveries.deliveries(job.id, 0, 100);
      expect(deliveries.map((x) => [x.seq, x.type])).toEqual(
        events.filter((e) => e.type.startsWith('batch.')).map((e) => [e.seq, e.type]),
      );
      const [row] = await d.kysely
        .selectFrom('batch_delivery')
        .select('payload')
        .where('seq', '=', 1)
        .where('job_id', '=', job.id)
        .execute();
      const payload = JSON.parse(row.payload);
      expect(payload).toMatchObject({
        type: 'batch.queued',
        job_id: job.id,
        seq: 1,
        data: { targets_total: 1 },
        job: { id: job.id, status: 'queued', targets_total: 1 },
      });
      expect(row.payload).not.toContain(hook.secret);
      // An event whose transaction rolls back leaves no delivery either.
      await expect(
        d.db.transaction(async (s) => {
          await s.deliveries.putDelivery({
            jobId: job.id,
            seq: 99,
            type: 'batch.done',
            payload: '{}',
            now: now(),
            callerKey: 'fleet:alice',
          });
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await d.reader.deliveries.deliveries(job.id, 10, 100)).toEqual([]);
    });

    it('per job, only the first pending delivery is handed out, to one instance; a lost holder frees it', async () => {
      const { job } = await life.submit(draft(['http://a.test/1'], { webhook: hook }), limits);
      await runAll(job.id, () => done());
      const claim = (holder: string) =>
        d.db.transaction(async (s) => {
          await lockDeliveries(s);
          return s.deliveries.claimDeliveries({ holder, now: now(), limit: 10 });
        });
      const first = await claim(ME);
      expect(first.map((x) => [x.seq, x.attempts, x.url, x.secret])).toEqual([[1, 1, hook.url, hook.secret]]);
      expect(await claim(OTHER)).toEqual([]); // seq 2 waits for seq 1
      // ME is lost while sending it: its recovery frees the delivery for OTHER.
      await d.db.transaction((tx) => tx.instances.registerInstance({ id: ME, host: 'h', now: now() }));
      await recovery.recoverLost(ME);
      const again = await claim(OTHER);
      expect(again.map((x) => [x.seq, x.attempts])).toEqual([[1, 2]]);
      // A result from the lost holder is not written; the new holder's is.
      const write = {
        jobId: job.id,
        seq: 1,
        state: 'delivered' as const,
        nextAttemptAt: now(),
        lastStatus: 200,
        lastError: null,
        lastMessage: null,
      };
      expect(await finishDelivery({ ...write, holder: ME })).toBe(false);
      expect(await finishDelivery({ ...write, holder: OTHER })).toBe(true);
      expect((await claim(ME)).map((x) => x.seq)).toEqual([2]);
      // Not due yet: a retry waits for its time.
      await finishDelivery({
        ...write,
        seq: 2,
        holder: ME,
        state: 'pending',
        nextAttemptAt: now() + 5,
        lastStatus: 500,
      });
      expect(await claim(OTHER)).toEqual([]);
      clock.t += 5000;
      expect((await claim(OTHER)).map((x) => [x.seq, x.attempts])).toEqual([[2, 2]]);
      clock.t -= 5000;
      // Delivered: its holder goes on with the job's next one, held at once, no claim needed.
      const next = await finishAndTakeNext({ ...write, seq: 2, holder: OTHER }, now());
      expect(next).toMatchObject({ seq: 3, attempts: 1 });
      expect(await claim(ME)).toEqual([]);
      expect(await finishAndTakeNext({ ...write, seq: 2, holder: OTHER }, now())).toBe(false);
      // A failed attempt takes nothing next.
      expect(
        await finishAndTakeNext(
          { ...write, seq: 3, holder: OTHER, state: 'pending', nextAttemptAt: now() },
          now(),
        ),
      ).toBeUndefined();
    });

    it('a delivered attempt takes the next due one in one statement; one not yet due is promoted', async () => {
      const log: string[] = [];
      await d.close();
      d = await db.open({ trace: (q) => log.push(q) });
      ({ life } = lifecycleOf(d, clock, new JobSignals()));
      const { job } = await life.submit(draft(['http://a.test/1'], { webhook: hook }), limits);
      await runAll(job.id, () => done());
      const [first] = await d.db.transaction(async (s) => {
        await lockDeliveries(s);
        return s.deliveries.claimDeliveries({ holder: ME, now: now(), limit: 10 });
      });
      const write = {
        jobId: job.id,
        seq: first.seq,
        holder: ME,
        state: 'delivered' as const,
        nextAttemptAt: now(),
        lastStatus: 200,
        lastError: null,
        lastMessage: null,
      };
      const writes = () => log.filter((q) => /^\s*update\b/i.test(q)).length;
      let before = writes();
      expect(await finishAndTakeNext(write, now())).toMatchObject({ seq: first.seq + 1, attempts: 1 });
      // The outcome, then the next one taken: no statement making it due first.
      expect(writes() - before).toBe(2);
      // The one after it is not due until its next attempt: promoted, due then, taken by a claim.
      await d.kysely
        .updateTable('batch_delivery')
        .set({ next_attempt_at: now() + 60 })
        .where('job_id', '=', job.id)
        .where('seq', '=', first.seq + 2)
        .execute();
      before = writes();
      expect(await finishAndTakeNext({ ...write, seq: first.seq + 1 }, now())).toBeUndefined();
      expect(writes() - before).toBe(3);
      const [row] = await d.kysely
        .selectFrom('batch_delivery')
        .select(['holder', 'due_at'])
        .where('job_id', '=', job.id)
        .where('seq', '=', first.seq + 2)
        .execute();
      expect(row).toEqual({ holder: null, due_at: now() + 60 });
    });

    it('redeliver queues the undelivered again from now (all of them with all), not one being sent', async () => {
      const { job } = await life.submit(draft(['http://a.test/1'], { webhook: hook }), limits);
      await runAll(job.id, () => done());
      const all = await d.reader.deliveries.deliveries(job.id, 0, 100);
      for (const x of all) {
        await d.kysely
          .updateTable('batch_delivery')
          .set({ state: x.seq === 1 ? 'delivered' : 'failed', attempts: 7 })
          .where('job_id', '=', job.id)
          .where('seq', '=', x.seq)
          .execute();
      }
      expect(await redeliver(job.id, now() + 1, false)).toBe(all.length - 1);
      const after = await d.reader.deliveries.deliveries(job.id, 0, 100);
      expect(after.map((x) => [x.state, x.attempts])).toEqual([
        ['delivered', 7],
        ...all.slice(1).map(() => ['pending', 0]),
      ]);
      expect(after[1].nextAttemptAt).toBe(now() + 1);
      const counts = await d.reader.deliveries.deliveryCounts(); // over every job in the database
      expect(await redeliver(job.id, now(), true)).toBe(all.length);
      expect((await d.reader.deliveries.deliveries(job.id, 0, 100)).map((x) => x.state)).toEqual(
        all.map(() => 'pending'),
      );
      expect(await d.reader.deliveries.deliveryCounts()).toEqual({
        ...counts,
        pending: counts.pending + 1,
        delivered: counts.delivered - 1,
      });
    });
  });
});
