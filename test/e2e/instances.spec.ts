import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { JobSignals } from '../../src/batch/job-signals';
import { Clock } from '../../src/common/clock';
import { Metrics } from '../../src/common/metrics';
import { BatchStore, Dcache, Db, lockDeliveries } from '../../src/dcache';
import { InstanceService } from '../../src/cluster/instance.service';
import { RunnerService } from '../../src/runner/runner.service';
import { createTestApp, waitForJob, waitUntil, fleet } from '../support/app';
import { lifecycleOf } from '../support/lifecycle';
import { Receiver, newSecret } from '../support/receiver';
import { EVENT_TYPES } from '../../src/common/job-status';
import { createPgDatabase } from '../support/backends';
import { Fixture, html, send, slowArticle } from '../support/fixture';

/** Three apps (instances) on one PostgreSQL database, fetching from one fixture server. */
describe('several instances on one PostgreSQL database', () => {
  let pg: { url: string; drop: () => Promise<void> };
  let fx: Fixture;
  let apps: INestApplication[];
  const held: (() => void)[] = [];
  const http = (i: number) => request(apps[i].getHttpServer());

  beforeAll(async () => {
    pg = await createPgDatabase();
    fx = await new Fixture({
      '/p/*': slowArticle(10),
      '/hold/*': (req, res) => held.push(() => send(200, 'text/html', html('<p>let go</p>'))(req, res)),
      // A folder whose pages link out of it: a crawl kept to it by path_prefix.
      '/site/in/*': (req, res) => {
        const n = Number(req.url!.split('/').pop());
        const to = n === 0 ? Array.from({ length: 20 }, (_, i) => `/site/in/${i + 1}`) : [];
        const links = [...to, `/site/out/${n}`].map((h) => `<a href="${h}">${h}</a>`).join(' ');
        setTimeout(
          () => send(200, 'text/html', html(`<p>Page ${n} of the folder.</p>${links}`))(req, res),
          20,
        );
      },
      '/site/out/*': send(200, 'text/html', html('<p>Outside the folder.</p>')),
    }).start();
    apps = [];
    for (let i = 0; i < 3; i++) {
      const { app } = await createTestApp({
        SIFT_DATABASE_URL: pg.url,
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_FLEET_MAX_LIVE_JOBS: '3',
        SIFT_RUNNER_CONCURRENCY: '4',
        // Over all instances together: room for the 3 × 4 slots.
        SIFT_PER_HOST_CONCURRENCY: '12',
        SIFT_HEARTBEAT_S: '1',
        SIFT_INSTANCE_TTL_S: '3',
      });
      apps.push(app);
    }
  });
  afterEach(() => {
    for (const let_go of held.splice(0)) let_go();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await fx.stop();
    await pg.drop();
  });

  const targetsRecorded = async (app: INestApplication) =>
    (await app.get(Metrics).targets.get()).values.reduce((n, v) => n + v.value, 0);

  it('a job submitted on one instance is run by all three, each target fetched once', async () => {
    const before = await Promise.all(apps.map(targetsRecorded));
    const targets = Array.from({ length: 90 }, (_, i) => ({ url: fx.url(`/p/spread-${i}`) }));
    const sub = await http(0).post('/v1/batch').set(fleet).send({ targets });
    expect(sub.status).toBe(202);
    expect(await waitForJob(apps[2], sub.body.id)).toMatchObject({ status: 'done', targets_done: 90 });
    for (let i = 0; i < 90; i++) expect(fx.hitCount(`/p/spread-${i}`)).toBe(1);
    const byInstance = (await Promise.all(apps.map(targetsRecorded))).map((n, i) => n - before[i]);
    expect(byInstance.reduce((a, b) => a + b)).toBe(90);
    expect(byInstance.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    const events = (await http(1).get(`/v1/batch/${sub.body.id}/events`).set(fleet)).body.events;
    expect(events.map((e: { seq: number }) => e.seq)).toEqual(events.map((_: unknown, i: number) => i + 1));
    // Three instances started it at once; one said so.
    const jobEvents = events
      .map((e: { type: string }) => e.type)
      .filter((t: string) => t.startsWith('batch.'));
    expect(jobEvents).toEqual(['batch.queued', 'batch.running', 'batch.done']);
  });

  it('a crawl kept to its path_prefix holds to it on every instance that grows it', async () => {
    const before = await Promise.all(apps.map(targetsRecorded));
    const sub = await http(0)
      .post('/v1/crawl')
      .set(fleet)
      .send({ url: fx.url('/site/in/0'), path_prefix: '/site/in/', limit: 100, sitemap: 'skip' });
    expect(sub.status).toBe(202);
    expect(await waitForJob(apps[1], sub.body.id)).toMatchObject({ status: 'done', targets_done: 21 });
    for (let i = 0; i <= 20; i++) expect(fx.hitCount(`/site/in/${i}`)).toBe(1);
    for (let i = 0; i <= 20; i++) expect(fx.hitCount(`/site/out/${i}`)).toBe(0);
    const byInstance = (await Promise.all(apps.map(targetsRecorded))).map((n, i) => n - before[i]);
    expect(byInstance.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  });

  it('path regexes hold on every instance that grows the crawl', async () => {
    const hits = (p: string) => Array.from({ length: 21 }, (_, i) => fx.hitCount(`${p}${i}`));
    const [inBefore, outBefore] = [hits('/site/in/'), hits('/site/out/')];
    const sub = await http(1)
      .post('/v1/crawl')
      .set(fleet)
      .send({
        url: fx.url('/site/in/0'),
        include_regex: ['^/site/in/'],
        exclude_regex: ['/(1|2)$'],
        limit: 100,
        sitemap: 'skip',
        options: { max_age_s: 0 },
      });
    expect(sub.status).toBe(202);
    expect(await waitForJob(apps[2], sub.body.id)).toMatchObject({ status: 'done', targets_done: 19 });
    const inAdded = hits('/site/in/').map((n, i) => n - inBefore[i]);
    expect(inAdded).toEqual(Array.from({ length: 21 }, (_, i) => (i === 1 || i === 2 ? 0 : 1)));
    expect(hits('/site/out/')).toEqual(outBefore);
  });

  it('20 submits of one Idempotency-Key at once over 3 instances make exactly one job', async () => {
    const body = { targets: [{ url: fx.url('/p/idem') }] };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        http(i % 3)
          .post('/v1/batch')
          .set(fleet)
          .set('Idempotency-Key', 'one-key')
          .send(body)
          .then((r) => r),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 202]);
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
    await waitForJob(apps[0], answers[0].body.id);
  });

  it('a caller at its live-job limit, submitting on 3 instances at once, never exceeds it', async () => {
    const store = apps[0].get(BatchStore);
    await waitUntil(
      async () => ((await store.liveBatchJobs('fleet-caller')) === 0 ? true : undefined),
      'no live job',
    );
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        http(i % 3)
          .post('/v1/batch')
          .set(fleet)
          .send({ targets: [{ url: fx.url(`/hold/limit-${i}`) }] })
          .then((r) => r),
      ),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(6);
    expect(await store.liveBatchJobs('fleet-caller')).toBe(3);
    for (const r of answers.filter((a) => a.status === 202))
      await http(1).delete(`/v1/batch/${r.body.id}`).set(fleet);
  });

  it('cancel on one instance stops the fetches the others started', async () => {
    const targets = Array.from({ length: 30 }, (_, i) => ({ url: fx.url(`/hold/cancel-${i}`) }));
    const sub = await http(0).post('/v1/batch').set(fleet).send({ targets });
    // Every instance has claimed and started some: 4 slots each.
    await waitUntil(() => (held.length >= 12 ? true : undefined), 'every instance fetching');
    const hitsAtCancel = [...fx.hits.keys()].filter((p) => p.startsWith('/hold/cancel-')).length;
    expect((await http(2).delete(`/v1/batch/${sub.body.id}`).set(fleet)).body.status).toBe('cancelled');
    const stopped = await Promise.all(
      apps.map((app) =>
        waitUntil(
          () => (app.get(RunnerService).stats.inFlight === 0 ? true : undefined),
          'fetches aborted',
          5000,
        ),
      ),
    );
    expect(stopped).toHaveLength(3);
    for (const let_go of held.splice(0)) let_go();
    const after = [...fx.hits.keys()].filter((p) => p.startsWith('/hold/cancel-')).length;
    expect(after).toBe(hitsAtCancel);
    const view = (await http(1).get(`/v1/batch/${sub.body.id}`).set(fleet)).body;
    expect(view).toMatchObject({ status: 'cancelled', targets_done: 0 });
  });

  it('an event committed on one instance wakes the others at once (NOTIFY)', async () => {
    // Committed without this process's own signals: only the database can tell the others.
    const { life } = lifecycleOf(apps[0].get(Dcache), new Clock(), new JobSignals());
    const heard = new Promise<string>((resolve) => apps[1].get(JobSignals).onSubmitted(resolve));
    const { job } = await life.submit(
      {
        caller: { name: 'fleet-caller', callerClass: 'fleet' },
        idemKey: '',
        fingerprint: 'notify',
        onRestart: 'fail',
        targets: [{ url: fx.url('/hold/notify'), options: '{}' }],
      },
      { idemTtlS: 60, callerLiveJobs: 10, totalLiveJobs: 100 },
    );
    expect(await heard).toBe(job.id);
    const cancelled = new Promise<string>((resolve) => apps[2].get(JobSignals).onCancelled(resolve));
    // Shorter than the poll: only the notification can wake it in time.
    const woken = apps[2].get(JobSignals).nextEvent(job.id, 1500);
    await life.cancel(job.id);
    expect(await woken).toBe(true);
    expect(await cancelled).toBe(job.id);
  });

  it('an event stream on one instance sees the events the others write, to the end', async () => {
    const targets = Array.from({ length: 24 }, (_, i) => ({ url: fx.url(`/p/sse-${i}`) }));
    const sub = await http(1).post('/v1/batch').set(fleet).send({ targets });
    const r = await http(0)
      .get(`/v1/batch/${sub.body.id}/events`)
      .set(fleet)
      .set('Accept', 'text/event-stream');
    const ids = [...r.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect((r.text.match(/event: target\.done\n/g) ?? []).length).toBe(24);
    expect(r.text).toMatch(/event: batch\.done\n/);
  });

  it("a lost instance's targets are recovered by one live instance, by the job's policy", async () => {
    const dcache = apps[0].get(Dcache);
    // Submitted, and two targets claimed by an instance that then stopped beating, in one
    // transaction: the live instances hear of the job only once the ghost holds them.
    const { life } = lifecycleOf(dcache, new Clock(), new JobSignals());
    const { id, claimed } = await apps[0].get(Db).transaction(async (tx) => {
      const { job: submitted } = await life.submitIn(
        tx,
        {
          caller: { name: 'fleet-caller', callerClass: 'fleet' },
          idemKey: '',
          fingerprint: 'lost',
          onRestart: 'resume',
          targets: Array.from({ length: 12 }, (_, i) => ({ url: fx.url(`/p/lost-${i}`), options: '{}' })),
        },
        { idemTtlS: 60, callerLiveJobs: 10, totalLiveJobs: 100 },
      );
      await tx.instances.registerInstance({ id: 'ghost', host: 'gone', now: 1 });
      return {
        id: submitted.id,
        claimed: (await life.claimIn(tx, { jobId: submitted.id, holder: 'ghost', limit: 2 }))!.targets,
      };
    });
    const sub = { body: { id } };
    expect(claimed.map((t) => t.idx)).toEqual([0, 1]);
    const job = await waitForJob(apps[1], sub.body.id);
    expect(job).toMatchObject({ status: 'done', targets_done: 12, targets_failed: 0 });
    const events = (await http(0).get(`/v1/batch/${sub.body.id}/events`).set(fleet)).body.events;
    const requeued = events.filter((e: { type: string }) => e.type === 'batch.requeued');
    expect(requeued).toHaveLength(1);
    expect(requeued[0].data).toEqual({ policy: 'resume', targets_reset: 2, instance: 'ghost' });
    for (let i = 0; i < 12; i++) expect(fx.hitCount(`/p/lost-${i}`)).toBe(1);
    expect(await dcache.reader.instances.lostInstances(Number.MAX_SAFE_INTEGER)).not.toContain('ghost');
    const live = await apps[2].get(InstanceService).live();
    expect(live.map((i) => i.id).sort()).toEqual(apps.map((a) => a.get(InstanceService).id).sort());
  });

  it('webhooks: a delivery held by a lost instance is sent by a live one; every event arrives in seq order', async () => {
    const secret = newSecret();
    const rx = await new Receiver(secret).start();
    try {
      const { life } = lifecycleOf(apps[0].get(Dcache), new Clock(), new JobSignals());
      // A job whose first delivery a ghost instance took (and never sent) before it stopped beating.
      const id = await apps[0].get(Db).transaction(async (tx) => {
        const { job } = await life.submitIn(
          tx,
          {
            caller: { name: 'fleet-caller', callerClass: 'fleet' },
            idemKey: '',
            fingerprint: 'hooked',
            onRestart: 'resume',
            targets: Array.from({ length: 30 }, (_, i) => ({ url: fx.url(`/p/hooked-${i}`), options: '{}' })),
            webhook: { url: rx.url, secret, events: [...EVENT_TYPES] },
          },
          { idemTtlS: 60, callerLiveJobs: 10, totalLiveJobs: 100 },
        );
        await tx.instances.registerInstance({ id: 'ghost-sender', host: 'gone', now: 1 });
        await lockDeliveries(tx);
        const taken = await tx.deliveries.claimDeliveries({
          holder: 'ghost-sender',
          // Times are kept to the millisecond: the delivery is due at the submit's own.
          now: Date.now() / 1000,
          limit: 1,
        });
        expect(taken.map((d) => [d.jobId, d.seq])).toEqual([[job.id, 1]]);
        return job.id;
      });
      await waitForJob(apps[2], id);
      const events = (await http(1).get(`/v1/batch/${id}/events`).set(fleet)).body.events as {
        seq: number;
        type: string;
      }[];
      await waitUntil(
        () => rx.unique().length >= events.length || undefined,
        'every event delivered',
        20_000,
      );
      expect(rx.rejected).toEqual([]);
      expect(rx.unique().map((r) => [r.payload.seq, r.payload.type])).toEqual(
        events.map((e) => [e.seq, e.type]),
      );
      // In order as received, not only once de-duplicated.
      const seqs = rx.received.map((r) => r.payload.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      const deliveries = (await http(0).get(`/v1/batch/${id}/deliveries`).set(fleet)).body.deliveries;
      expect(deliveries[0]).toMatchObject({ seq: 1, state: 'delivered', attempts: 2 });
    } finally {
      await rx.stop();
    }
  });
});
