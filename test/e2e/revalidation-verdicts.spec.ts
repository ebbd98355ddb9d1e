import * as fs from 'node:fs';
import * as path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, waitForJob, TestClock, fleet } from '../support/app';
import { Fixture, articleHtml, send } from '../support/fixture';

const labelled = (name: string) =>
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'verdicts', name), 'utf8');

describe('revalidation and verdicts through the app', () => {
  let app: INestApplication;
  let fx: Fixture;
  const clock = new TestClock(1_900_000_000_000);
  const http = () => request(app.getHttpServer());
  let version = 'v1';
  const answered304: string[] = [];

  beforeAll(async () => {
    fx = await new Fixture({
      // A page with an ETag: 304 when the caller holds the current one.
      '/etag': (req, res) => {
        const tag = `"${version}"`;
        if (req.headers['if-none-match'] === tag) {
          answered304.push('/etag');
          res.writeHead(304, { etag: tag }).end();
          return;
        }
        send(200, 'text/html', articleHtml(`Tagged ${version}`, 6), { etag: tag })(req, res);
      },
      '/dated': (req, res) => {
        const date = 'Tue, 01 Sep 2026 10:00:00 GMT';
        if (req.headers['if-modified-since'] === date) {
          answered304.push('/dated');
          res.writeHead(304).end();
          return;
        }
        send(200, 'text/html', articleHtml('Dated', 6), { 'last-modified': date })(req, res);
      },
      '/challenge': send(200, 'text/html', labelled('challenge/cloudflare-just-a-moment.html')),
      '/gone': send(200, 'text/html', labelled('not_found/wordpress-twentytwenty.html')),
      '/article': send(200, 'text/html', articleHtml('A real article', 8)),
      '/short': send(200, 'text/html', '<html><body><p>Only a few words here.</p></body></html>'),
      '/error': send(500, 'text/html', articleHtml('Server trouble', 3)),
    }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }, { clock }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  const fetchIt = (url: string, extra: object = {}) =>
    http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url, ...extra });

  it('a page with an ETag re-fetched after max_age_s answers from a 304, content unchanged', async () => {
    const first = (await fetchIt(fx.url('/etag'), { max_age_s: 60 })).body;
    expect(first).toMatchObject({ cached: false, revalidated: false, verdict: 'ok' });
    expect((await fetchIt(fx.url('/etag'), { max_age_s: 60 })).body).toMatchObject({
      cached: true,
      revalidated: false,
    });
    expect(fx.hitCount('/etag')).toBe(1);
    clock.t += 61_000;
    const again = (await fetchIt(fx.url('/etag'), { max_age_s: 60 })).body;
    expect(answered304).toEqual(['/etag']);
    expect(again).toMatchObject({
      cached: true,
      revalidated: true,
      content: first.content,
      digest: first.digest,
    });
    expect(new Date(again.fetched_at).getTime()).toBe(Math.floor(clock.t / 1000) * 1000);
    // Refreshed: within max_age_s of the 304, the copy is fresh again without asking.
    expect((await fetchIt(fx.url('/etag'), { max_age_s: 60 })).body).toMatchObject({
      cached: true,
      revalidated: false,
    });
    expect(fx.hitCount('/etag')).toBe(2);
    // Changed upstream: a new ETag, a new page.
    version = 'v2';
    clock.t += 61_000;
    const changed = (await fetchIt(fx.url('/etag'), { max_age_s: 60 })).body;
    expect(changed).toMatchObject({ cached: false, revalidated: false, title: 'Tagged v2' });
    expect(answered304).toEqual(['/etag']);
  });

  it('Last-Modified works the same way (If-Modified-Since)', async () => {
    const first = (await fetchIt(fx.url('/dated'), { max_age_s: 10 })).body;
    clock.t += 11_000;
    const again = (await fetchIt(fx.url('/dated'), { max_age_s: 10 })).body;
    expect(answered304).toContain('/dated');
    expect(again).toMatchObject({ cached: true, revalidated: true, content: first.content });
  });

  it('each envelope says what the page is', async () => {
    const verdicts: Record<string, string> = {};
    for (const p of ['/challenge', '/gone', '/article', '/short', '/error']) {
      verdicts[p] = (await fetchIt(fx.url(p), { max_age_s: 0 })).body.verdict;
    }
    expect(verdicts).toEqual({
      '/challenge': 'challenge',
      '/gone': 'not_found',
      '/article': 'ok',
      '/short': 'empty',
      '/error': 'error_page',
    });
    const metrics = (await http().get('/metrics')).text;
    expect(metrics).toMatch(/sift_fetches_total\{outcome="ok",verdict="challenge"\} 1/);
    expect(metrics).toMatch(/sift_fetches_total\{outcome="ok",verdict="not_found"\} 1/);
  });

  it('a job counts its flagged targets; ?verdict= picks them, as JSON and NDJSON', async () => {
    const paths = ['/article', '/challenge', '/article?2', '/gone', '/short'];
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: paths.map((p) => ({ url: fx.url(p) })) });
    const job = await waitForJob(app, sub.body.id);
    expect(job).toMatchObject({ status: 'done', targets_done: 5, targets_failed: 0, targets_flagged: 3 });
    const only = async (verdict: string) =>
      (await http().get(`/v1/batch/${sub.body.id}/results?verdict=${verdict}`).set(fleet)).body;
    expect((await only('challenge')).results.map((r: { idx: number }) => r.idx)).toEqual([1]);
    expect((await only('ok')).results.map((r: { idx: number }) => r.idx)).toEqual([0, 2]);
    const paged = (await http().get(`/v1/batch/${sub.body.id}/results?verdict=ok&limit=1`).set(fleet)).body;
    expect([paged.results.map((r: { idx: number }) => r.idx), paged.next]).toEqual([[0], 0]);
    const rest = (await http().get(`/v1/batch/${sub.body.id}/results?verdict=ok&limit=1&after=0`).set(fleet))
      .body;
    expect([rest.results.map((r: { idx: number }) => r.idx), rest.next]).toEqual([[2], null]);
    const nd = await http()
      .get(`/v1/batch/${sub.body.id}/results?verdict=not_found`)
      .set(fleet)
      .set('Accept', 'application/x-ndjson');
    expect(
      nd.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).idx),
    ).toEqual([3]);
    const bad = await http().get(`/v1/batch/${sub.body.id}/results?verdict=maybe`).set(fleet);
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_request']);
  });
});
