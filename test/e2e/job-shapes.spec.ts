import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { createTestApp, waitForJob, waitUntil, TestClock, fleet, restricted } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

type Line = { idx: number; status: string; result: unknown; error: unknown; parent_idx: number | null };
const lines = (text: string): Line[] =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Line);

/**
 * On both databases: a cancelled job's unfinished targets end
 * cancelled and can be retried; the job view's counts and error; times to the millisecond; one
 * paging vocabulary (after + next) on jobs, results and events; status filters; NDJSON of a live
 * job, as it stands or followed to its end.
 */
describe.each(BACKENDS)('job states and shapes, on %s', (backend) => {
  let app: INestApplication;
  let fx: Fixture;
  let drop: (() => Promise<void>) | undefined;
  // A clock whose milliseconds are not .000: every time the API shows comes from it.
  const clock = new TestClock(1_800_000_000_123);
  const http = () => request(app.getHttpServer());
  const iso = (ms: number) => new Date(ms).toISOString();

  /** The first request for a /hold/ path waits here until the test lets it go; later ones are answered. */
  const held = new Map<string, () => void>();
  const seen = new Set<string>();
  const letGo = () => {
    for (const go of held.values()) go();
    held.clear();
  };
  const page = (path: string) =>
    send(
      200,
      'text/html',
      html(`<article><p>Page ${path} has words enough to be an article body, yes it has.</p></article>`),
    );

  beforeAll(async () => {
    fx = await new Fixture({
      '/hold/*': (req, res) => {
        const path = req.url ?? '';
        if (seen.has(path)) return page(path)(req, res);
        seen.add(path);
        held.set(path, () => page(path)(req, res));
      },
      '/page/*': (req, res) => page(req.url ?? '')(req, res),
      '/hook': send(200, 'text/plain', 'ok'),
    }).start();
    const env: Record<string, string> = {
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      // One target at a time, in idx order: which targets have started when a job is cancelled is
      // known.
      SIFT_RUNNER_CONCURRENCY: '1',
    };
    if (backend === 'postgres') {
      const pg = await createPgDatabase();
      drop = pg.drop;
      env.SIFT_DATABASE_URL = pg.url;
    }
    ({ app } = await createTestApp(env, { clock }));
  });
  beforeEach(() => {
    // Each test's jobs are newer than every earlier test's, by whole seconds and a fraction.
    clock.t += 1_000_017;
  });
  afterEach(letGo);
  afterAll(async () => {
    letGo();
    await app.close();
    await drop?.();
    await fx.stop();
  });

  const submit = async (targets: string[], headers = fleet, extra: object = {}) => {
    const r = await http()
      .post('/v1/batch')
      .set(headers)
      .send({ targets: targets.map((url) => ({ url })), ...extra });
    expect(r.status).toBe(202);
    return r.body as { id: string } & Record<string, unknown>;
  };
  const view = async (id: string) => (await http().get(`/v1/batch/${id}`).set(fleet)).body;
  /** Waits until the job has `done` targets finished and the fixture holds `holding` requests. */
  const settle = (id: string, done: number, holding: number) =>
    waitUntil(
      async () => ((await view(id)).targets_done === done && held.size === holding ? true : undefined),
      () => `job ${id} to have ${done} targets finished and ${holding} held`,
      30_000,
    );
  /**
   * A followed NDJSON stream as it comes: open once its head has arrived (the server sends it at
   * once), the text so far, ended once it has; `done` is the response, its body the whole text.
   */
  const follow = (id: string, query: string) => {
    const stream = {
      open: false,
      text: '',
      ended: false,
      done: undefined as unknown as Promise<request.Response>,
    };
    stream.done = http()
      .get(`/v1/batch/${id}/results?${query}`)
      .set(fleet)
      .set('Accept', 'application/x-ndjson')
      .parse((res, cb) => {
        stream.open = true;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (stream.text += chunk));
        res.on('end', () => cb(null, stream.text));
      })
      .then((r) => {
        stream.ended = true;
        return r;
      });
    return stream;
  };
  const results = async (id: string, query = '') =>
    (await http().get(`/v1/batch/${id}/results${query}`).set(fleet)).body as {
      results: Line[];
      next: number | null;
    };

  it("a cancel ends the job's unfinished targets cancelled (the one in flight too), counted beside failed ones", async () => {
    const job = await submit([
      fx.url('/page/a0'),
      fx.url('/hold/a1'),
      fx.url('/page/a2'),
      fx.url('/page/a3'),
    ]);
    await settle(job.id, 1, 1);
    const cancel = await http().delete(`/v1/batch/${job.id}`).set(fleet);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({
      status: 'cancelled',
      targets_total: 4,
      targets_done: 1,
      targets_failed: 0,
      targets_cancelled: 3,
      error: null,
    });
    // The fetch in flight was aborted; its late answer changes nothing.
    letGo();
    const { results: rs } = await results(job.id);
    expect(rs.map((r) => [r.idx, r.status])).toEqual([
      [0, 'done'],
      [1, 'cancelled'],
      [2, 'cancelled'],
      [3, 'cancelled'],
    ]);
    expect(rs.slice(1).map((r) => [r.result, r.error])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
    const events = (await http().get(`/v1/batch/${job.id}/events`).set(fleet)).body.events;
    expect(events[events.length - 1]).toMatchObject({
      type: 'batch.cancelled',
      data: { targets_done: 1, targets_cancelled: 3 },
    });
    expect(await view(job.id)).toMatchObject({ status: 'cancelled', targets_done: 1, targets_cancelled: 3 });
  });

  it('a cancelled job is retried: the new job takes its failed and its cancelled targets', async () => {
    const refused = 'http://127.0.0.1:1/refused';
    const job = await submit([fx.url('/page/b0'), refused, fx.url('/hold/b2'), fx.url('/page/b3')]);
    await settle(job.id, 2, 1);
    await http().delete(`/v1/batch/${job.id}`).set(fleet).expect(200);
    expect(await view(job.id)).toMatchObject({ targets_done: 2, targets_failed: 1, targets_cancelled: 2 });
    const retry = await http().post(`/v1/batch/${job.id}/retry`).set(fleet);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ parent_id: job.id, targets_total: 3 });
    const child = await waitForJob(app, retry.body.id);
    expect(child).toMatchObject({
      status: 'partial',
      targets_done: 3,
      targets_failed: 1,
      targets_cancelled: 0,
    });
    const { results: rs } = await results(retry.body.id);
    expect(rs.map((r) => [r.parent_idx, r.status])).toEqual([
      [1, 'failed'],
      [2, 'done'],
      [3, 'done'],
    ]);
  });

  it('error is null when the job has none, and its error when it has one', async () => {
    const ok = await submit([fx.url('/page/c0')]);
    expect(ok.error).toBeNull();
    expect(await waitForJob(app, ok.id)).toMatchObject({ status: 'done', error: null });
    const bad = await submit(['not a url'], fleet, { ignore_invalid_urls: true });
    expect(bad).toMatchObject({ status: 'failed', error: 'every target failed' });
  });

  it('times are ISO-8601 with the milliseconds they happened at: created_at, event at, deliveries', async () => {
    const t0 = clock.t;
    expect(t0 % 1000).not.toBe(0);
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const job = await submit([fx.url('/hold/d0')], fleet, {
      webhook: { url: fx.url('/hook'), secret, events: ['batch.queued', 'batch.cancelled'] },
    });
    expect(job.created_at).toBe(iso(t0));
    await settle(job.id, 0, 1);
    // The cancel comes 250 ms later, in the same second: its event's time is its own.
    clock.t += 250;
    await http().delete(`/v1/batch/${job.id}`).set(fleet).expect(200);
    const v = await view(job.id);
    expect(v.created_at).toBe(iso(t0));
    expect(v.lease_expires_at).toBe(iso(t0 + 250 + v.ttl_s * 1000));
    const events = (await http().get(`/v1/batch/${job.id}/events`).set(fleet)).body.events;
    expect(events.map((e: { type: string; at: string }) => [e.type, e.at])).toEqual([
      ['batch.queued', iso(t0)],
      ['batch.running', iso(t0)],
      ['batch.cancelled', iso(t0 + 250)],
    ]);
    const deliveries = await waitUntil(
      async () => {
        const d = (await http().get(`/v1/batch/${job.id}/deliveries`).set(fleet)).body.deliveries;
        return d.length === 2 && d.every((x: { state: string }) => x.state === 'delivered') ? d : undefined;
      },
      () => 'both deliveries to be delivered',
      30_000,
    );
    expect(deliveries.map((d: { created_at: string }) => d.created_at)).toEqual([iso(t0), iso(t0 + 250)]);
  });

  it('the jobs list pages with after and next (cursor still accepted), through jobs of one second', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.t += 7; // three jobs within one second, each its own millisecond
      ids.push((await submit(['not a url'], restricted, { ignore_invalid_urls: true })).id);
    }
    const walk = async (param: 'after' | 'cursor') => {
      const seenIds: string[] = [];
      let next: string | null = null;
      do {
        const q: string = next ? `&${param}=${encodeURIComponent(next)}` : '';
        const r = await http().get(`/v1/batch?limit=1${q}`).set(restricted);
        expect(r.status).toBe(200);
        seenIds.push(...r.body.jobs.map((j: { id: string }) => j.id));
        next = r.body.next;
      } while (next && seenIds.length < 3);
      return seenIds;
    };
    expect(await walk('after')).toEqual([...ids].reverse());
    expect(await walk('cursor')).toEqual([...ids].reverse());
    const first = (await http().get('/v1/batch?limit=1').set(restricted)).body.next;
    const both = await http().get(`/v1/batch?after=${first}&cursor=${first}`).set(restricted);
    expect(both.body.jobs[0].id).toBe(ids[1]);
    const differ = await http().get(`/v1/batch?after=${first}&cursor=x`).set(restricted);
    expect([differ.status, differ.body.error?.code]).toEqual([400, 'invalid_request']);
  });

  it('results and events page with after and next too', async () => {
    const job = await submit([fx.url('/page/e0'), fx.url('/page/e1'), fx.url('/page/e2')]);
    await waitForJob(app, job.id);
    const first = await results(job.id, '?limit=2');
    expect([first.results.map((r) => r.idx), first.next]).toEqual([[0, 1], 1]);
    const second = await results(job.id, `?limit=2&after=${first.next}`);
    expect([second.results.map((r) => r.idx), second.next]).toEqual([[2], null]);
    const events = (await http().get(`/v1/batch/${job.id}/events?limit=2`).set(fleet)).body;
    expect([events.events.map((e: { seq: number }) => e.seq), events.next]).toEqual([[1, 2], 2]);
    const rest = (await http().get(`/v1/batch/${job.id}/events?after=${events.next}`).set(fleet)).body;
    expect(rest.events[0].seq).toBe(3);
    expect(rest.next).toBeNull();
  });

  it('status= filters the jobs list and the results; an unknown status is 400', async () => {
    const failed = await submit(['not a url'], fleet, { ignore_invalid_urls: true });
    const done = await submit([fx.url('/page/f9')]);
    await waitForJob(app, done.id);
    const job = await submit([
      fx.url('/page/f0'),
      'http://127.0.0.1:1/refused',
      fx.url('/hold/f2'),
      fx.url('/page/f3'),
    ]);
    await settle(job.id, 2, 1);
    await http().delete(`/v1/batch/${job.id}`).set(fleet).expect(200);

    const listed = async (q: string) => {
      const r = await http().get(`/v1/batch?limit=100&${q}`).set(fleet);
      expect(r.status).toBe(200);
      return new Map<string, string>(
        r.body.jobs.map((j: { id: string; status: string }) => [j.id, j.status]),
      );
    };
    const cancelled = await listed('status=cancelled');
    expect(new Set(cancelled.values())).toEqual(new Set(['cancelled']));
    expect([cancelled.has(job.id), cancelled.has(done.id), cancelled.has(failed.id)]).toEqual([
      true,
      false,
      false,
    ]);
    const ended = await listed('status=done,failed');
    expect([...ended.values()].every((s) => s === 'done' || s === 'failed')).toBe(true);
    expect([ended.has(job.id), ended.has(done.id), ended.has(failed.id)]).toEqual([false, true, true]);
    const repeated = await listed('status=queued&status=failed');
    expect([repeated.has(done.id), repeated.has(failed.id)]).toEqual([false, true]);

    const statuses = async (q: string) => (await results(job.id, q)).results.map((r) => [r.idx, r.status]);
    expect(await statuses('?status=cancelled')).toEqual([
      [2, 'cancelled'],
      [3, 'cancelled'],
    ]);
    expect(await statuses('?status=failed,cancelled&limit=2')).toEqual([
      [1, 'failed'],
      [2, 'cancelled'],
    ]);
    expect(await statuses('?status=done')).toEqual([[0, 'done']]);
    const nd = await http()
      .get(`/v1/batch/${job.id}/results?status=done,failed`)
      .set(fleet)
      .set('Accept', 'application/x-ndjson');
    expect(lines(nd.text).map((l) => l.idx)).toEqual([0, 1]);

    for (const path of [
      '/v1/batch?status=finished',
      '/v1/batch?status=done,',
      `/v1/batch/${job.id}/results?status=ok`,
      `/v1/batch/${job.id}/results?status=done,paused`,
    ]) {
      const r = await http().get(path).set(fleet);
      expect([path, r.status, r.body.error?.code]).toEqual([path, 400, 'invalid_request']);
      expect(r.body.error.hint).toEqual(expect.any(String));
    }
  });

  it("a live job's NDJSON shows its unfinished targets as they stand; follow=true writes each as it ends, to the job's end", async () => {
    const job = await submit([fx.url('/page/g0'), fx.url('/hold/g1'), fx.url('/page/g2')]);
    await settle(job.id, 1, 1);
    const now = await http()
      .get(`/v1/batch/${job.id}/results`)
      .set(fleet)
      .set('Accept', 'application/x-ndjson');
    expect(lines(now.text).map((l) => [l.idx, l.status])).toEqual([
      [0, 'done'],
      [1, 'running'],
      [2, 'pending'],
    ]);
    const followed = follow(job.id, 'follow=true');
    // Held: the stream has written target 0 and waits at target 1 for as long as its fetch does.
    await waitUntil(() => (followed.text.includes('\n') ? true : undefined), 'the line of target 0');
    expect(lines(followed.text).map((l) => [l.idx, l.status])).toEqual([[0, 'done']]);
    expect(followed.ended).toBe(false);
    letGo();
    const r = await followed.done;
    expect(r.status).toBe(200);
    expect(lines(r.body as string).map((l) => [l.idx, l.status])).toEqual([
      [0, 'done'],
      [1, 'done'],
      [2, 'done'],
    ]);
    expect(lines(r.body as string).every((l) => l.result !== null)).toBe(true);
    expect((await view(job.id)).status).toBe('done');
  });

  it('follow=true on a job cancelled meanwhile ends with its cancelled targets', async () => {
    const job = await submit([fx.url('/hold/h0'), fx.url('/page/h1')]);
    await settle(job.id, 0, 1);
    const followed = follow(job.id, 'follow=1');
    await waitUntil(() => (followed.open ? true : undefined), 'the followed stream to open');
    await http().delete(`/v1/batch/${job.id}`).set(fleet).expect(200);
    const r = await followed.done;
    expect(lines(r.body as string).map((l) => [l.idx, l.status])).toEqual([
      [0, 'cancelled'],
      [1, 'cancelled'],
    ]);
  });
});
