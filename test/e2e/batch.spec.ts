import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { createTestApp, waitForJob, TestClock, fleet, restricted } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

describe('batch jobs over HTTP', () => {
  let app: INestApplication;
  let fx: Fixture;
  const clock = new TestClock(Date.now());
  const http = () => request(app.getHttpServer());

  const waitFor = (id: string, statuses?: string[], headers = fleet) =>
    waitForJob(app, id, headers, statuses);

  /** Answers to /hold/* wait here until the test lets them go, so a job stays live meanwhile. */
  const held: (() => void)[] = [];

  beforeAll(async () => {
    fx = await new Fixture({
      '/hold/*': (req, res) => held.push(() => send(200, 'text/plain', 'let go')(req, res)),
      '/page/*': (req, res) =>
        send(
          200,
          'text/html',
          html(
            `<article><p>Page ${req.url} has words enough to be an article body, yes.</p></article>`,
            `T ${req.url}`,
          ),
        )(req, res),
      '/gif': send(200, 'image/gif', Buffer.from('GIF89a', 'latin1')),
    }).start();
  });
  // Each test has an app of its own: nothing one leaves behind (live jobs, a stopped runner) is
  // seen by the next.
  beforeEach(async () => {
    ({ app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_RESTRICTED_MAX_TARGETS: '5', SIFT_FLEET_MAX_LIVE_JOBS: '3' },
      { clock },
    ));
  });
  afterEach(async () => {
    for (const let_go of held.splice(0)) let_go();
    await app.close();
  });
  afterAll(() => fx.stop());

  it('runs a 200-target job to done with ordered, paginated and NDJSON results', async () => {
    const targets = Array.from({ length: 200 }, (_, i) => ({ url: fx.url(`/page/${i}`) }));
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets, options: { format: 'text' } });
    expect(sub.status).toBe(202);
    expect(sub.headers.location).toBe(`/v1/batch/${sub.body.id}`);
    expect(sub.body).toMatchObject({ status: 'queued', targets_total: 200, on_restart: 'fail', error: null });
    const job = await waitFor(sub.body.id);
    expect(job).toMatchObject({ status: 'done', targets_done: 200, targets_failed: 0 });

    const seen: number[] = [];
    let after = -1;
    for (;;) {
      const page = await http().get(`/v1/batch/${job.id}/results?after=${after}&limit=64`).set(fleet);
      expect(page.status).toBe(200);
      for (const r of page.body.results) {
        seen.push(r.idx);
        expect(r).toMatchObject({ url: fx.url(`/page/${r.idx}`), status: 'done', error: null });
        expect(r.result.content).toContain(`Page /page/${r.idx} has words`);
        expect(r.result.format).toBe('text');
      }
      if (page.body.next === null) break;
      after = page.body.next;
    }
    expect(seen).toEqual([...Array(200).keys()]);

    const nd = await http()
      .get(`/v1/batch/${job.id}/results`)
      .set(fleet)
      .set('Accept', 'application/x-ndjson');
    expect(nd.status).toBe(200);
    expect(nd.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = nd.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.idx)).toEqual([...Array(200).keys()]);

    const ev = await http().get(`/v1/batch/${job.id}/events`).set(fleet);
    const types = ev.body.events.map((e: { type: string }) => e.type);
    expect(types[0]).toBe('batch.queued');
    expect(types[1]).toBe('batch.running');
    expect(types.filter((t: string) => t === 'target.done')).toHaveLength(200);
    expect(types[types.length - 1]).toBe('batch.done');
    expect(ev.body.events.map((e: { seq: number }) => e.seq)).toEqual(
      [...Array(types.length).keys()].map((i) => i + 1),
    );
  });

  it("a target's own options go over the job's, and what they leave unset keeps the job's", async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        options: { format: 'text', max_bytes: 60 },
        targets: [
          { url: fx.url('/page/o0') },
          { url: fx.url('/page/o1'), options: { max_bytes: 30 } },
          { url: fx.url('/page/o2'), options: { format: 'html' } },
        ],
      });
    const job = await waitFor(sub.body.id);
    expect(job).toMatchObject({ status: 'done', targets_done: 3 });
    const page = await http().get(`/v1/batch/${job.id}/results`).set(fleet);
    const shown = page.body.results.map((r: { result: { format: string; bytes: number } }, i: number) => [
      r.result.format,
      r.result.bytes <= [60, 30, 60][i],
    ]);
    expect(shown).toEqual([
      ['text', true],
      ['text', true],
      ['html', true],
    ]);
  });

  it('a mixed job ends partial with per-target codes and hints', async () => {
    const targets = [
      { url: fx.url('/page/a') },
      { url: fx.url('/gif') },
      { url: 'http://10.9.9.9/' },
      { url: fx.url('/page/b') },
    ];
    const sub = await http().post('/v1/batch').set(fleet).send({ targets });
    const job = await waitFor(sub.body.id);
    expect(job).toMatchObject({ status: 'partial', targets_done: 4, targets_failed: 2 });
    const res = (await http().get(`/v1/batch/${job.id}/results`).set(fleet)).body.results;
    expect(res.map((r: { status: string }) => r.status)).toEqual(['done', 'failed', 'failed', 'done']);
    expect(res[1].error).toMatchObject({ code: 'unsupported_content_type' });
    expect(res[2].error).toMatchObject({ code: 'blocked_address' });
    expect(res[2].error.hint).toBeTruthy();
    expect(res[1].result).toBeNull();
  });

  it('a job whose every target fails ends failed', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/gif') }] });
    expect(await waitFor(sub.body.id)).toMatchObject({ status: 'failed', targets_failed: 1 });
  });

  it('another caller sees 404 for every route of a job', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/page/x') }] });
    for (const path of ['', '/results', '/events']) {
      const r = await http().get(`/v1/batch/${sub.body.id}${path}`).set(restricted);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    expect((await http().delete(`/v1/batch/${sub.body.id}`).set(restricted)).status).toBe(404);
    const list = await http().get('/v1/batch').set(restricted);
    expect(list.body.jobs.map((j: { id: string }) => j.id)).not.toContain(sub.body.id);
    await waitFor(sub.body.id);
  });

  it('idempotent replay answers 200 with the same job; another body is 409', async () => {
    const body = { targets: [{ url: fx.url('/page/idem') }] };
    const a = await http().post('/v1/batch').set(fleet).set('Idempotency-Key', 'k-1').send(body);
    expect(a.status).toBe(202);
    const b = await http().post('/v1/batch').set(fleet).set('Idempotency-Key', 'k-1').send(body);
    expect(b.status).toBe(200);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.body.id).toBe(a.body.id);
    const c = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ ...body, idempotency_key: 'k-1' });
    expect(c.body.id).toBe(a.body.id);
    const d = await http()
      .post('/v1/batch')
      .set(fleet)
      .set('Idempotency-Key', 'k-1')
      .send({ targets: [{ url: fx.url('/page/other') }] });
    expect(d.status).toBe(409);
    expect(d.body.error.code).toBe('idempotency_conflict');
    const e = await http().post('/v1/batch').set(fleet).send(body);
    expect(e.body.id).not.toBe(a.body.id);
    await waitFor(a.body.id);
    await waitFor(e.body.id);
  });

  it('a cancelled job is never replayed: the same key starts a new job', async () => {
    const body = { targets: Array.from({ length: 3 }, (_, i) => ({ url: `http://10.0.0.${i}/` })) };
    const a = await http().post('/v1/batch').set(fleet).set('Idempotency-Key', 'k-cancel').send(body);
    await http().delete(`/v1/batch/${a.body.id}`).set(fleet);
    const b = await http().post('/v1/batch').set(fleet).set('Idempotency-Key', 'k-cancel').send(body);
    expect(b.status).toBe(202);
    expect(b.body.id).not.toBe(a.body.id);
    await waitFor(b.body.id);
  });

  it('enforces class limits: too many targets 400, too many live jobs 429 with Retry-After', async () => {
    const six = Array.from({ length: 6 }, (_, i) => ({ url: `http://example.test/${i}` }));
    const r = await http().post('/v1/batch').set(restricted).send({ targets: six });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('too_many_targets');
    // Three jobs whose fetches are held stay live.
    for (let i = 0; i < 3; i++) {
      const live = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url(`/hold/l${i}`) }] });
      expect(live.status).toBe(202);
    }
    const over = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/page/l') }] });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('too_many_jobs');
    expect(over.headers['retry-after']).toBeDefined();
  });

  it('cancel: 200, again 200, a finished job 409 not_cancellable', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/hold/c') }] });
    const c1 = await http().delete(`/v1/batch/${sub.body.id}`).set(fleet);
    expect(c1.status).toBe(200);
    expect(c1.body.status).toBe('cancelled');
    const c2 = await http().delete(`/v1/batch/${sub.body.id}`).set(fleet);
    expect([c2.status, c2.body]).toEqual([200, c1.body]);
    const done = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/page/d') }] });
    await waitFor(done.body.id);
    const c3 = await http().delete(`/v1/batch/${done.body.id}`).set(fleet);
    expect(c3.status).toBe(409);
    expect(c3.body.error.code).toBe('not_cancellable');
  });

  it("lists the caller's jobs newest first with a cursor, and only theirs", async () => {
    const submitted: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.t += 1000; // one job a second: created_at orders them
      const r = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url(`/page/list-${i}`) }] });
      submitted.push(r.body.id);
      await waitFor(r.body.id); // a fleet caller may have 3 live jobs here
    }
    // A job of the same second as the last one still comes in a definite place, once.
    const twin = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/page/list-twin') }] });
    await http()
      .post('/v1/batch')
      .set(restricted)
      .send({ targets: [{ url: 'http://example.test/' }] });
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const r: request.Response = await http()
        .get(`/v1/batch?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        .set(fleet);
      expect(r.status).toBe(200);
      pages.push(r.body.jobs.map((j: { id: string }) => j.id));
      cursor = r.body.next;
    } while (cursor);
    const listed = pages.flat();
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2]);
    const lastTwo = [submitted[4], twin.body.id].sort().reverse(); // same second: id descending
    expect(listed).toEqual([...lastTwo, ...submitted.slice(0, 4).reverse()]);
  });

  it('streams events as SSE, honouring Last-Event-ID, and ends after the terminal event', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/page/s1') }, { url: fx.url('/page/s2') }] });
    const r = await http()
      .get(`/v1/batch/${sub.body.id}/events`)
      .set(fleet)
      .set('Accept', 'text/event-stream');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/event-stream/);
    const ids = [...r.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(r.text).toMatch(/event: batch\.done\n/);
    const resumed = await http()
      .get(`/v1/batch/${sub.body.id}/events`)
      .set(fleet)
      .set('Accept', 'text/event-stream')
      .set('Last-Event-ID', '2');
    const ids2 = [...resumed.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids2[0]).toBe(3);
    expect(ids2[ids2.length - 1]).toBe(ids[ids.length - 1]);
    // A client that reconnects after the terminal event is told to stop (204), not given a line
    // kept open on a job that will never have another event.
    const past = await http()
      .get(`/v1/batch/${sub.body.id}/events`)
      .set(fleet)
      .set('Accept', 'text/event-stream')
      .set('Last-Event-ID', String(ids[ids.length - 1]))
      .timeout(5000);
    expect(past.status).toBe(204);
    expect(past.text).toBe('');
  });

  describe('bad input never gets a 5xx', () => {
    it.each([
      ['no body', undefined],
      ['targets missing', {}],
      ['targets not an array', { targets: 'x' }],
      ['empty targets', { targets: [] }],
      ['target without url', { targets: [{}] }],
      ['bad url', { targets: [{ url: 'ftp://x' }] }],
      ['bad option', { targets: [{ url: 'http://x.test/', options: { format: 'pdf' } }] }],
      ['bad job option', { targets: [{ url: 'http://x.test/' }], options: { timeout_ms: -5 } }],
      ['bad policy', { targets: [{ url: 'http://x.test/' }], on_restart: 'maybe' }],
      ['unknown field', { targets: [{ url: 'http://x.test/' }], priority: 1 }],
      ['string target', { targets: ['http://x.test/'] }],
    ])('%s → 400', async (_name, body) => {
      const r = await http()
        .post('/v1/batch')
        .set(fleet)
        .send(body as object);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
      expect(r.body.error.hint).toBeTruthy();
    });

    it('10,001 targets → 400 too_many_targets', async () => {
      const targets = Array.from({ length: 10_001 }, (_, i) => ({ url: `http://x.test/${i}` }));
      const r = await http().post('/v1/batch').set(fleet).send({ targets });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('too_many_targets');
    });

    it('malformed JSON → 400', async () => {
      const r = await http()
        .post('/v1/batch')
        .set(fleet)
        .set('Content-Type', 'application/json')
        .send('{"targets": [');
      expect(r.status).toBe(400);
    });

    it.each([
      ['/v1/batch?cursor=garbage', 400],
      ['/v1/batch?cursor=WyJ4IiwxXQ', 400],
      ['/v1/batch?limit=0', 400],
      ['/v1/batch?limit=abc', 400],
      ['/v1/batch/nope', 404],
      ['/v1/batch/nope/results?after=x', 400],
      ['/v1/batch/nope/results?limit=5000', 400],
      ['/v1/batch/nope/events?after=-3', 400],
    ])('GET %s → %d', async (path, status) => {
      const r = await http().get(path).set(fleet);
      expect(r.status).toBe(status);
      expect(r.body.error.code).toBeTruthy();
    });
  });
});
