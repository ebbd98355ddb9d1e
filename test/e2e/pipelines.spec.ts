import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { EVENT_TYPES } from '../../src/common/job-status';
import { Dcache } from '../../src/dcache';
import { SweeperService } from '../../src/runner/sweeper.service';
import { createTestApp, waitForJob, waitUntil, TestClock, fleet, restricted } from '../support/app';
import { LogSink } from '../support/log-sink';
import { Fixture, html, send } from '../support/fixture';
import { Receiver, newSecret } from '../support/receiver';

describe('pipelines over HTTP: retry, webhooks, retention, duplicates', () => {
  let app: INestApplication;
  let fx: Fixture;
  let logs: LogSink;
  const http_ = () => request(app.getHttpServer());
  /** /flaky/* resets the connection until `recovered`. */
  let recovered = false;

  beforeAll(async () => {
    fx = await new Fixture({
      '/page/*': (req, res) =>
        send(
          200,
          'text/html',
          html(`<article><p>Page ${req.url} has words enough to be read.</p></article>`),
        )(req, res),
      '/flaky/*': (req, res) => {
        if (!recovered) return req.socket.destroy();
        send(
          200,
          'text/html',
          html(`<article><p>Recovered ${req.url} with words enough.</p></article>`),
        )(req, res);
      },
    }).start();
  });
  beforeEach(async () => {
    logs = new LogSink();
    recovered = false;
    ({ app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_WEBHOOK_RETRY_S: '1', SIFT_BATCH_MAX_TTL_S: '86400' },
      { logger: logs },
    ));
  });
  afterEach(() => app.close());
  afterAll(() => fx.stop());

  const submit = (body: object, headers = fleet) => http_().post('/v1/batch').set(headers).send(body);
  const results = async (id: string, headers = fleet) =>
    (await http_().get(`/v1/batch/${id}/results?limit=1000`).set(headers)).body.results as {
      idx: number;
      url: string;
      status: string;
      result: { content: string } | null;
      error: { code: string } | null;
      parent_idx: number | null;
    }[];

  it('retry: only the 3 failed of 10 targets are fetched again, and parent_idx maps each back', async () => {
    const targets = Array.from({ length: 10 }, (_, i) => ({
      url: fx.url([1, 4, 8].includes(i) ? `/flaky/${i}` : `/page/${i}`),
    }));
    const sub = await submit({ targets, options: { max_age_s: 0 } });
    const parent = await waitForJob(app, sub.body.id);
    expect(parent).toMatchObject({ status: 'partial', targets_failed: 3, parent_id: null });
    expect((await results(sub.body.id)).filter((r) => r.error).map((r) => [r.idx, r.error!.code])).toEqual([
      [1, 'connect_error'],
      [4, 'connect_error'],
      [8, 'connect_error'],
    ]);
    const before = new Map(fx.hits);
    recovered = true;

    const retry = await http_()
      .post(`/v1/batch/${sub.body.id}/retry`)
      .set(fleet)
      .set('Idempotency-Key', 'r1');
    expect(retry.status).toBe(202);
    expect(retry.headers.location).toBe(`/v1/batch/${retry.body.id}`);
    expect(retry.body).toMatchObject({ parent_id: sub.body.id, targets_total: 3 });
    const child = await waitForJob(app, retry.body.id);
    expect(child).toMatchObject({ status: 'done', targets_done: 3, targets_failed: 0 });
    const got = await results(retry.body.id);
    expect(got.map((r) => [r.idx, r.parent_idx, r.url, r.status])).toEqual([
      [0, 1, fx.url('/flaky/1'), 'done'],
      [1, 4, fx.url('/flaky/4'), 'done'],
      [2, 8, fx.url('/flaky/8'), 'done'],
    ]);
    expect(got[0].result!.content).toContain('Recovered /flaky/1');
    // Only those three were asked for again.
    for (const [path, n] of fx.hits) {
      expect([path, n - (before.get(path) ?? 0)]).toEqual([path, path.startsWith('/flaky/') ? 1 : 0]);
    }
    // The same key: the same child. The child has nothing failed; the parent is not another's.
    const again = await http_()
      .post(`/v1/batch/${sub.body.id}/retry`)
      .set(fleet)
      .set('Idempotency-Key', 'r1');
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(retry.body.id);
    const nothing = await http_().post(`/v1/batch/${retry.body.id}/retry`).set(fleet);
    expect(nothing.status).toBe(409);
    expect(nothing.body.error).toMatchObject({ code: 'not_retryable' });
    const other = await http_().post(`/v1/batch/${sub.body.id}/retry`).set(restricted);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
  });

  it('retry of a live job is 409 not_retryable', async () => {
    const held: (() => void)[] = [];
    const slow = await new Fixture({
      '/*': (req, res) => held.push(() => send(200, 'text/plain', 'late')(req, res)),
    }).start();
    try {
      const sub = await submit({ targets: [{ url: slow.url('/x') }] });
      await waitUntil(() => held.length > 0 || undefined, 'the fetch to start');
      const r = await http_().post(`/v1/batch/${sub.body.id}/retry`).set(fleet);
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: 'not_retryable', message: 'the job is still running' });
    } finally {
      for (const h of held) h();
      await slow.stop();
    }
  });

  describe('webhooks', () => {
    let rx: Receiver;
    const secret = newSecret();
    beforeEach(async () => {
      rx = await new Receiver(secret).start();
    });
    afterEach(() => rx.stop());

    it('every event of the job arrives verified, once per webhook-id, in seq order; the secret is shown nowhere', async () => {
      const targets = Array.from({ length: 12 }, (_, i) => ({ url: fx.url(`/page/w${i}`) }));
      const sub = await submit({ targets, webhook: { url: rx.url, secret, events: [...EVENT_TYPES] } });
      expect(sub.status).toBe(202);
      await waitForJob(app, sub.body.id);
      const events = (await http_().get(`/v1/batch/${sub.body.id}/events`).set(fleet)).body.events as {
        seq: number;
        type: string;
      }[];
      await waitUntil(() => rx.unique().length >= events.length || undefined, 'every event delivered');
      const got = rx.unique();
      expect(rx.rejected).toEqual([]);
      expect(got.map((r) => [r.payload.seq, r.payload.type])).toEqual(events.map((e) => [e.seq, e.type]));
      expect(got.map((r) => r.id)).toEqual(events.map((e) => `${sub.body.id}:${e.seq}`));
      expect(got[0].payload).toMatchObject({
        type: 'batch.queued',
        job_id: sub.body.id,
        job: { id: sub.body.id },
      });
      expect(got[got.length - 1].payload).toMatchObject({
        type: 'batch.done',
        job: { status: 'done', targets_done: 12 },
      });
      expect(got[0].headers['content-type']).toBe('application/json');

      // Verification means something: another secret, or a changed body, fails it.
      const one = got[0];
      expect(() =>
        new Webhook(newSecret()).verify(one.body, one.headers as Record<string, string>),
      ).toThrow();
      expect(() =>
        new Webhook(secret).verify(
          one.body.replace('batch.queued', 'batch.queuex'),
          one.headers as Record<string, string>,
        ),
      ).toThrow();

      const deliveries = await http_().get(`/v1/batch/${sub.body.id}/deliveries`).set(fleet);
      expect(deliveries.status).toBe(200);
      expect(deliveries.body.webhook).toEqual({ url: rx.url, events: [...EVENT_TYPES] });
      expect(deliveries.body.deliveries.map((x: { state: string }) => x.state)).toEqual(
        events.map(() => 'delivered'),
      );
      const view = await http_().get(`/v1/batch/${sub.body.id}`).set(fleet);
      for (const text of [
        JSON.stringify(sub.body),
        JSON.stringify(view.body),
        JSON.stringify(events),
        JSON.stringify(deliveries.body),
        ...logs.lines,
      ]) {
        expect(text).not.toContain(secret.slice(6));
      }
    });

    it('a receiver answering 500 three times, then 200: the deliveries list shows the attempts and the success', async () => {
      rx.answer = (n) => (n < 3 ? 500 : 200);
      const sub = await submit({ targets: [{ url: fx.url('/page/r') }], webhook: { url: rx.url, secret } });
      const first = await waitUntil(async () => {
        const b = (await http_().get(`/v1/batch/${sub.body.id}/deliveries`).set(fleet)).body;
        return b.deliveries[0]?.attempts >= 1 ? b.deliveries[0] : undefined;
      }, 'a first attempt');
      expect(first).toMatchObject({
        seq: 1,
        type: 'batch.queued',
        state: 'pending',
        last_status: 500,
        last_error: { code: 'http_status', message: 'the receiver answered 500: answer 0' },
      });
      expect(typeof first.next_attempt_at).toBe('string');
      const all = await waitUntil(
        async () => {
          const b = (await http_().get(`/v1/batch/${sub.body.id}/deliveries`).set(fleet)).body;
          return b.deliveries.length === 3 &&
            b.deliveries.every((x: { state: string }) => x.state === 'delivered')
            ? b.deliveries
            : undefined;
        },
        'every delivery delivered',
        20_000,
      );
      expect(
        all.map(
          (x: {
            seq: number;
            attempts: number;
            last_status: number;
            last_error: unknown;
            next_attempt_at: unknown;
          }) => [x.seq, x.attempts, x.last_status, x.last_error, x.next_attempt_at],
        ),
      ).toEqual([
        [1, 4, 200, null, null],
        [2, 1, 200, null, null],
        [4, 1, 200, null, null], // batch.queued, batch.running, (target.done: not asked for), batch.done
      ]);
      // Ordered: nothing of seq 2 was sent before seq 1 was delivered.
      expect(rx.received.map((r) => r.payload.seq)).toEqual([1, 1, 1, 1, 2, 4]);
      const metrics = (await http_().get('/metrics')).text;
      expect(metrics).toMatch(/sift_webhook_attempts_total\{outcome="retry"\} 3/);
      expect(metrics).toMatch(/sift_webhook_attempts_total\{outcome="delivered"\} 3/);
      expect(metrics).toMatch(/sift_webhook_deliveries\{state="delivered"\} 3/);

      // Redeliver all: each sent once more, in order.
      const re = await http_()
        .post(`/v1/batch/${sub.body.id}/deliveries/redeliver`)
        .set(fleet)
        .send({ all: true });
      expect(re.status).toBe(202);
      expect(re.body).toEqual({ queued: 3 });
      await waitUntil(() => rx.received.length >= 9 || undefined, 'redelivered');
      expect(rx.received.slice(6).map((r) => r.payload.seq)).toEqual([1, 2, 4]);
    });

    it("a restricted caller's webhook to 127.0.0.1 (as localhost) is never contacted; the delivery shows blocked_address", async () => {
      const sub = await submit(
        {
          targets: [{ url: 'http://example.invalid/x' }],
          webhook: { url: rx.url.replace('127.0.0.1', 'localhost'), secret },
        },
        restricted,
      );
      expect(sub.status).toBe(202);
      await waitForJob(app, sub.body.id, restricted);
      const all = await waitUntil(async () => {
        const b = (await http_().get(`/v1/batch/${sub.body.id}/deliveries`).set(restricted)).body;
        // batch.queued, batch.running, batch.failed (its one target is not reachable either)
        return b.deliveries.length === 3 && b.deliveries.every((x: { state: string }) => x.state === 'failed')
          ? b.deliveries
          : undefined;
      }, 'both deliveries refused');
      expect(all[0]).toMatchObject({
        attempts: 1,
        last_status: null,
        last_error: { code: 'blocked_address' },
      });
      expect(all[0].last_error.message).not.toContain('127.0.0.1');
      expect(rx.hits).toBe(0);
    });
  });

  it('dedupe: the same URL 50 times is 1 upstream request and 50 done results', async () => {
    const url = fx.url('/page/same');
    const sub = await submit({
      targets: Array.from({ length: 50 }, () => ({ url })),
      options: { max_age_s: 0 },
    });
    const job = await waitForJob(app, sub.body.id);
    expect(job).toMatchObject({ status: 'done', targets_done: 50 });
    expect(fx.hitCount('/page/same')).toBe(1);
    const got = await results(sub.body.id);
    expect(got).toHaveLength(50);
    expect(new Set(got.map((r) => r.status))).toEqual(new Set(['done']));
    expect(new Set(got.map((r) => r.result!.content)).size).toBe(1);
  });

  it('ignore_invalid_urls keeps bad URLs as failed targets; without it they are a 400 naming the target', async () => {
    const targets = [{ url: fx.url('/page/v') }, { url: 'ftp://x.test/' }, { url: 'not a url' }];
    const bad = await submit({ targets });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('targets.1.url'),
    });
    const sub = await submit({ targets, ignore_invalid_urls: true });
    expect(sub.status).toBe(202);
    expect(sub.body).toMatchObject({ targets_done: 2, targets_failed: 2 });
    await waitForJob(app, sub.body.id);
    expect((await results(sub.body.id)).map((r) => [r.status, r.error?.code ?? null])).toEqual([
      ['done', null],
      ['failed', 'invalid_url'],
      ['failed', 'invalid_url'],
    ]);
    const none = await submit({ targets: [{ url: 'nope' }], ignore_invalid_urls: true });
    expect(none.body).toMatchObject({ status: 'failed', targets_failed: 1 });
  });

  it('purge: 204 for an ended job, leaving no row of it; 409 not_finished for a live one; 400 for a bad flag', async () => {
    const hook = await new Receiver(newSecret()).start();
    try {
      const sub = await submit({
        targets: [{ url: fx.url('/page/p') }],
        webhook: { url: hook.url, secret: newSecret() },
      });
      await waitForJob(app, sub.body.id);
      const r = await http_().delete(`/v1/batch/${sub.body.id}?purge=true`).set(fleet);
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect((await http_().get(`/v1/batch/${sub.body.id}`).set(fleet)).status).toBe(404);
      const db = app.get(Dcache).kysely;
      for (const table of ['batch_target', 'batch_event', 'batch_webhook', 'batch_delivery'] as const) {
        expect([
          table,
          (await db.selectFrom(table).selectAll().where('job_id', '=', sub.body.id).execute()).length,
        ]).toEqual([table, 0]);
      }
      expect(
        (await db.selectFrom('batch_job').selectAll().where('id', '=', sub.body.id).execute()).length,
      ).toBe(0);
      expect((await http_().delete(`/v1/batch/${sub.body.id}?purge=true`).set(fleet)).status).toBe(404);
      expect(
        (await http_().delete(`/v1/batch/${sub.body.id}?purge=yes`).set(fleet)).body.error,
      ).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('purge'),
      });
    } finally {
      await hook.stop();
    }
  });

  it('purge of a live job is 409 not_finished, and the job goes on', async () => {
    const held: (() => void)[] = [];
    const slow = await new Fixture({
      '/*': (req, res) => held.push(() => send(200, 'text/plain', 'late')(req, res)),
    }).start();
    try {
      const sub = await submit({ targets: [{ url: slow.url('/x') }] });
      const r = await http_().delete(`/v1/batch/${sub.body.id}?purge=true`).set(fleet);
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('not_finished');
      await waitUntil(() => held.length > 0 || undefined, 'the fetch to start');
      held.splice(0).forEach((h) => h());
      expect(await waitForJob(app, sub.body.id)).toMatchObject({ status: 'done' });
    } finally {
      await slow.stop();
    }
  });

  it('bad input: each a 400 envelope naming the field, the secret never echoed', async () => {
    const url = fx.url('/page/b');
    const secret = newSecret();
    const cases: [object, string][] = [
      [{ webhook: { url: 'ftp://hooks.test/x', secret } }, 'webhook.url'],
      [{ webhook: { url: 'http://hooks.test/x', secret: 'whsec_c2hvcnQ=' } }, 'webhook.secret'],
      [{ webhook: { url: 'http://hooks.test/x', secret: 'not-a-secret-at-all' } }, 'webhook.secret'],
      [
        { webhook: { url: 'http://hooks.test/x', secret: `whsec_${randomBytes(65).toString('base64')}` } },
        'webhook.secret',
      ],
      [{ webhook: { url: 'http://hooks.test/x', secret, events: ['batch.exploded'] } }, 'webhook.events'],
      [{ webhook: { url: 'http://hooks.test/x' } }, 'webhook.secret'],
      [{ ttl_s: 59 }, 'ttl_s'],
      [{ ttl_s: 86401 }, 'ttl_s'],
      [{ ttl_s: 'long' }, 'ttl_s'],
      [{ ignore_invalid_urls: 'yes' }, 'ignore_invalid_urls'],
    ];
    for (const [extra, field] of cases) {
      const r = await submit({ targets: [{ url }], ...extra });
      expect([field, r.status, r.body.error?.code]).toEqual([field, 400, 'invalid_request']);
      expect(r.body.error.message).toContain(field);
      expect(r.body.error.message).not.toContain(secret.slice(6));
    }
    const ok = await submit({
      targets: [{ url }],
      ttl_s: 86400,
      webhook: { url: 'http://hooks.test/x', secret },
    });
    expect(ok.status).toBe(202);
    expect(ok.body.ttl_s).toBe(86400);
    const redeliver = await http_()
      .post(`/v1/batch/${ok.body.id}/deliveries/redeliver`)
      .set(fleet)
      .send({ all: 'x' });
    expect(redeliver.status).toBe(400);
    expect((await http_().get(`/v1/batch/${ok.body.id}/deliveries`).set(restricted)).status).toBe(404);
  });
});

describe('per-job TTL through the sweeper', () => {
  it('a job with ttl_s is swept at exactly lease + ttl_s; one without keeps SIFT_BATCH_TTL_S', async () => {
    const clock = new TestClock(1_800_000_000_000);
    const { app } = await createTestApp({ SIFT_BATCH_TTL_S: '500' }, { clock });
    const fx = await new Fixture({ '/p': send(200, 'text/plain', 'a page of text') }).start();
    try {
      const http_ = () => request(app.getHttpServer());
      const own = await http_()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url('/p') }], ttl_s: 120 });
      const dflt = await http_()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url('/p') }] });
      const view = await waitForJob(app, own.body.id);
      await waitForJob(app, dflt.body.id);
      const lease = clock.now(); // the clock stands still: every write and read set this lease
      expect(view).toMatchObject({
        ttl_s: 120,
        lease_expires_at: new Date((lease + 120) * 1000).toISOString(),
      });
      expect(dflt.body.ttl_s).toBe(500);
      const sweeper = app.get(SweeperService);
      const exists = async (id: string) => (await app.get(Dcache).batch.batchJob(id)) !== undefined;
      clock.t = (lease + 119) * 1000;
      await sweeper.tick();
      expect(await exists(own.body.id)).toBe(true);
      clock.t = (lease + 120) * 1000;
      expect(await sweeper.tick()).toMatchObject({ swept: 1 });
      expect(await exists(own.body.id)).toBe(false);
      expect(await exists(dflt.body.id)).toBe(true);
      clock.t = (lease + 500) * 1000;
      expect(await sweeper.tick()).toMatchObject({ swept: 1 });
      expect(await exists(dflt.body.id)).toBe(false);
    } finally {
      await app.close();
      await fx.stop();
    }
  });
});

describe('a fleet webhook outside SIFT_FLEET_ALLOW', () => {
  it('is refused (blocked_address) like a fetch would be, and never contacted', async () => {
    const { app } = await createTestApp({ SIFT_WEBHOOK_RETRY_S: '1' });
    const rx = await new Receiver(newSecret()).start();
    try {
      const http_ = () => request(app.getHttpServer());
      const sub = await http_()
        .post('/v1/batch')
        .set(fleet)
        .send({
          targets: [{ url: 'http://example.invalid/' }],
          webhook: { url: rx.url, secret: newSecret() },
        });
      expect(sub.status).toBe(202);
      const first = await waitUntil(async () => {
        const d = (await http_().get(`/v1/batch/${sub.body.id}/deliveries`).set(fleet)).body.deliveries[0];
        return d?.state === 'failed' ? d : undefined;
      }, 'the first delivery refused');
      expect(first.last_error).toMatchObject({
        code: 'blocked_address',
        message: expect.stringContaining('127.0.0.1'),
      });
      expect(rx.hits).toBe(0);
    } finally {
      await rx.stop();
      await app.close();
    }
  });
});
