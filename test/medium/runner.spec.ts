import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { BatchReader, BatchStore, type BatchJob } from '../../src/dcache';
import { InstanceService } from '../../src/cluster/instance.service';
import { RunnerService } from '../../src/runner/runner.service';
import { SweeperService } from '../../src/runner/sweeper.service';
import { createTestApp, waitForJob, waitUntil, TestClock, fleet } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

function job(id: string, over: Partial<BatchJob> = {}): BatchJob {
  return {
    id,
    caller: 'fleet-caller',
    callerClass: 'fleet',
    idemKey: '',
    status: 'queued',
    error: '',
    targetsTotal: 4,
    targetsDone: 0,
    createdAt: 1000,
    lease: 1000,
    nbytes: 0,
    onRestart: 'fail',
    ...over,
  };
}

describe('sweeper on real SQLite with a set clock', () => {
  const clock = new TestClock(5_000_000);
  let app: INestApplication;
  let store: BatchStore;

  beforeEach(async () => {
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_BATCH_TTL_S: '100' }, { clock }));
    store = app.get(BatchStore);
    await app.get(RunnerService).stop(); // these tests drive the sweeper by hand
  });
  afterEach(() => app.close());

  describe('sweeper', () => {
    it('keeps live jobs however old their lease, and sweeps stale finished ones', async () => {
      await store.createBatchJob(job('live', { status: 'queued', lease: 1 }));
      await store.createBatchJob(job('running', { status: 'running', lease: 1 }));
      await store.createBatchJob(job('old-done', { status: 'done', lease: 1 }));
      await store.createBatchJob(job('fresh-done', { status: 'done', lease: clock.now() - 50 }));
      const r = await app.get(SweeperService).tick();
      expect(r).toMatchObject({ touched: 2, swept: 1 });
      expect(await store.batchJob('live')).toMatchObject({ lease: clock.now() });
      expect(await store.batchJob('running')).toBeDefined();
      expect(await store.batchJob('old-done')).toBeUndefined();
      expect(await store.batchJob('fresh-done')).toBeDefined();
      clock.t += 101_000;
      await app.get(SweeperService).tick();
      expect(await store.batchJob('fresh-done')).toBeUndefined();
      expect(await store.batchJob('live')).toBeDefined();
    });

    it('ends the targets of a cancel whose process stopped before they had all ended', async () => {
      await store.createBatchJob(job('cut', { status: 'cancelled', lease: clock.now() }));
      await store.putBatchTargets(
        'cut',
        ['done', 'pending', 'running', 'pending'].map((status, idx) => ({
          jobId: 'cut',
          idx,
          url: `http://a.test/${idx}`,
          options: '{}',
          status: status as 'done' | 'pending' | 'running',
          result: status === 'done' ? '{}' : null,
          error: null,
          hint: null,
        })),
      );
      await store.createBatchJob(job('live', { status: 'running', lease: clock.now() }));
      await store.putBatchTargets('live', [
        {
          jobId: 'live',
          idx: 0,
          url: 'http://a.test/',
          options: '{}',
          status: 'pending',
          result: null,
          error: null,
          hint: null,
        },
      ]);
      await app.get(SweeperService).tick();
      expect((await store.batchTargets('cut'))!.map((t) => t.status)).toEqual([
        'done',
        'cancelled',
        'cancelled',
        'cancelled',
      ]);
      expect(await store.batchJob('cut')).toMatchObject({
        status: 'cancelled',
        targetsDone: 1,
        targetsCancelled: 3,
      });
      expect((await store.batchTargets('live'))!.map((t) => t.status)).toEqual(['pending']);
    });

    it('is a cron job: every minute, on the minute, in UTC', async () => {
      const registry = app.get(SchedulerRegistry);
      // (The one interval is the monitors' tick, src/monitors/monitor-ticker.ts.)
      expect(registry.getIntervals()).toEqual(['monitors']);
      expect([...registry.getCronJobs().keys()]).toEqual(['sweep']);
      const job = registry.getCronJob('sweep');
      expect(job.cronTime.toString()).toBe('0 * * * * *');
      expect(job.cronTime.timeZone).toBe('UTC');
      const next = job.nextDates(2).map((d) => d.toMillis());
      expect(next[1] - next[0]).toBe(60_000);
      expect(next[0] % 60_000).toBe(0);
      expect(next[0] - Date.now()).toBeLessThanOrEqual(60_000);
    });

    it('overlapping ticks do nothing', async () => {
      const s = app.get(SweeperService);
      const [a, b] = await Promise.all([s.tick(), s.tick()]);
      expect([a, b].filter((x) => x === undefined)).toHaveLength(1);
    });
  });
});

describe('runner over HTTP fixtures', () => {
  let app: INestApplication;
  let fx: Fixture;
  let flaky = 0;
  const slowAnswered = new Set<string>();
  /** While true, /slow/* is answered only when the test lets go (heldSlow), not after 400 ms. */
  let holdingSlow = false;
  const heldSlow: (() => void)[] = [];
  const http = () => request(app.getHttpServer());

  const finished = (id: string) => waitForJob(app, id);

  beforeAll(async () => {
    fx = await new Fixture({
      '/flaky': (req, res) => {
        flaky++;
        if (flaky <= 2) send(503, 'text/plain', 'busy', { 'retry-after': '0' })(req, res);
        else send(200, 'text/plain', 'finally')(req, res);
      },
      '/always-503': send(503, 'text/plain', 'down', { 'retry-after': '0' }),
      '/big/*': (req, res) => send(200, 'text/plain', `${req.url} `.repeat(500))(req, res),
      '/slow/*': (req, res) => {
        const answer = () => {
          send(200, 'text/html', html('<p>slow</p>'))(req, res);
          slowAnswered.add(req.url!);
        };
        if (holdingSlow) heldSlow.push(answer);
        else setTimeout(answer, 400);
      },
    }).start();
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      // Results and rows: a live 64-target job alone holds some 19 KB of target rows.
      SIFT_BATCH_MAX_BYTES: '60000',
      SIFT_RUNNER_CONCURRENCY: '16',
      SIFT_PER_HOST_CONCURRENCY: '16',
    }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  it('retries 503 with Retry-After at most twice and counts the target once', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/flaky') }, { url: fx.url('/always-503') }] });
    const job = await finished(sub.body.id);
    expect(job).toMatchObject({ status: 'done', targets_done: 2 });
    expect(fx.hitCount('/flaky')).toBe(3);
    expect(fx.hitCount('/always-503')).toBe(3);
    const res = (await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet)).body.results;
    expect(res[0].result).toMatchObject({ status: 200, content: 'finally' });
    expect(res[1].result).toMatchObject({ status: 503 });
    const ev = (await http().get(`/v1/batch/${sub.body.id}/events`).set(fleet)).body.events;
    expect(ev.filter((e: { type: string }) => e.type === 'target.done')).toHaveLength(2);
  });

  it('keeps stored results under SIFT_BATCH_MAX_BYTES by evicting older finished jobs whole', async () => {
    const ids: string[] = [];
    for (let j = 0; j < 4; j++) {
      const sub = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: Array.from({ length: 5 }, (_, i) => ({ url: fx.url(`/big/${j}-${i}`) })) });
      ids.push(sub.body.id);
      await finished(sub.body.id);
    }
    const store = app.get(BatchStore);
    expect(await store.batchNbytes()).toBeLessThanOrEqual(60000);
    expect(await store.batchJob(ids[0])).toBeUndefined();
    expect(await store.batchJob(ids[3])).toBeDefined();
  });

  it('cancel while 16 fetches are in flight: stays cancelled, nothing after batch.cancelled, no new requests', async () => {
    const targets = Array.from({ length: 64 }, (_, i) => ({ url: fx.url(`/slow/${i}`) }));
    // Answers wait for the cancel: nothing is answered while the 16 are counted, however slowly a
    // loaded machine sends them.
    holdingSlow = true;
    try {
      const sub = await http().post('/v1/batch').set(fleet).send({ targets });
      const runner = app.get(RunnerService);
      const slowHits = () => [...fx.hits.keys()].filter((p) => p.startsWith('/slow/')).length;
      // All 16 requests have reached the fixture: they are in flight at both ends.
      await waitUntil(() => (slowHits() >= 16 ? true : undefined), '16 fetches in flight');
      expect(runner.stats.inFlight).toBe(16);
      expect(slowHits()).toBe(16);
      const cancel = await http().delete(`/v1/batch/${sub.body.id}`).set(fleet);
      expect(cancel.body.status).toBe('cancelled');
      const hitsAtCancel = slowHits();
      // Every request that reached the fixture has its answer sent after the cancel: a late
      // result would be in.
      holdingSlow = false;
      heldSlow.splice(0).forEach((answer) => answer());
      const reached = [...fx.hits.keys()].filter((p) => p.startsWith('/slow/'));
      await waitUntil(
        () => (reached.every((p) => slowAnswered.has(p)) ? true : undefined),
        'the answers sent',
      );
      await runner.idle();
      const job = (await http().get(`/v1/batch/${sub.body.id}`).set(fleet)).body;
      expect(job.status).toBe('cancelled');
      const ev = (await http().get(`/v1/batch/${sub.body.id}/events`).set(fleet)).body.events as {
        type: string;
      }[];
      const at = ev.findIndex((e) => e.type === 'batch.cancelled');
      expect(at).toBeGreaterThan(0);
      expect(ev.slice(at + 1)).toEqual([]);
      expect(slowHits()).toBe(hitsAtCancel);
      const results = (await http().get(`/v1/batch/${sub.body.id}/results?limit=100`).set(fleet)).body
        .results;
      expect(results.filter((r: { status: string }) => r.status === 'done')).toHaveLength(job.targets_done);
    } finally {
      holdingSlow = false;
      heldSlow.splice(0).forEach((answer) => answer());
    }
  });

  it('a small job is not starved by a large one (round-robin)', async () => {
    const big = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: Array.from({ length: 64 }, (_, i) => ({ url: fx.url(`/slow/b${i}`) })) });
    const small = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/slow/s0') }, { url: fx.url('/slow/s1') }] });
    const s = await finished(small.body.id);
    const b = (await http().get(`/v1/batch/${big.body.id}`).set(fleet)).body;
    expect(s.status).toBe('done');
    expect(b.targets_done).toBeLessThan(64);
    await http().delete(`/v1/batch/${big.body.id}`).set(fleet);
  });
});

describe('runner stop', () => {
  it("a job's last targets in flight at stop go back to pending, not left running under the stopped instance", async () => {
    const held: (() => void)[] = [];
    const fx = await new Fixture({
      '/hold/*': (req, res) => held.push(() => send(200, 'text/html', html('<p>late</p>'))(req, res)),
    }).start();
    const { app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' });
    try {
      const sub = await request(app.getHttpServer())
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url('/hold/1') }, { url: fx.url('/hold/2') }] });
      // Both targets, the job's last, are in flight: nothing of the job is left to claim.
      await waitUntil(() => (held.length === 2 ? true : undefined), 'both targets in flight');
      await app.get(RunnerService).stop(0);
      const targets = await app.get(BatchStore).batchTargets(sub.body.id);
      expect(targets?.map((t) => t.status)).toEqual(['pending', 'pending']);
      expect(await app.get(BatchReader).targets.targetsHeldBy(app.get(InstanceService).id)).toEqual([]);
    } finally {
      held.forEach((answer) => answer());
      await app.close();
      await fx.stop();
    }
  });
});
