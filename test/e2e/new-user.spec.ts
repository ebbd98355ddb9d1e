import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { EventSource } from 'eventsource';
import request from 'supertest';
import { createTestApp, waitForJob, waitUntil, fleet } from '../support/app';
import { Fixture, articleHtml, send } from '../support/fixture';

/** What a new user hit in the first hour, each as it showed. */
describe('the rough edges of the first hour', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({ '/*': send(200, 'text/html', articleHtml('A page', 6)) }).start();
  });
  afterAll(() => fx.stop());

  describe('with the default SIFT_FLEET_ALLOW', () => {
    let app: INestApplication;
    beforeAll(async () => ({ app } = await createTestApp()));
    afterAll(() => app.close());

    it('a body sent without content-type: application/json is 415 with a hint to set it', async () => {
      for (const [type, body] of [
        ['text/plain', JSON.stringify({ url: fx.url('/a') })],
        ['application/x-www-form-urlencoded', `url=${encodeURIComponent(fx.url('/a'))}`],
      ]) {
        const r = await request(app.getHttpServer())
          .post('/v1/fetch')
          .set(fleet)
          .set('content-type', type)
          .send(body);
        expect([r.status, r.body.error.code]).toEqual([415, 'unsupported_media_type']);
        expect(r.body.error.message).toContain(type);
        expect(r.body.error.hint).toMatch(/Content-Type: application\/json/);
      }
      // application/json and a +json type are read.
      for (const type of ['application/json', 'application/merge-patch+json']) {
        const r = await request(app.getHttpServer())
          .post('/v1/fetch')
          .set(fleet)
          .set('content-type', type)
          .send(JSON.stringify({ url: 'not a url' }));
        expect([type, r.status, r.body.error.code]).toEqual([type, 400, 'invalid_request']);
      }
    });

    it('GET on a POST route is 405 with Allow; an unknown path is still 404', async () => {
      const get = await request(app.getHttpServer()).get('/v1/fetch').set(fleet);
      expect([get.status, get.body.error.code, get.headers.allow]).toEqual([
        405,
        'method_not_allowed',
        'POST',
      ]);
      expect(get.body.error.hint).toContain('POST');
      const put = await request(app.getHttpServer()).put('/v1/batch/abc').set(fleet);
      expect([put.status, put.headers.allow]).toEqual([405, 'DELETE, GET, HEAD']);
      const none = await request(app.getHttpServer()).get('/v1/nothing-here').set(fleet);
      expect([none.status, none.body.error.code]).toEqual([404, 'not_found']);
    });

    it('a webhook without its secret is told so once, with how to make one', async () => {
      const r = await request(app.getHttpServer())
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url('/a') }], webhook: { url: 'https://hooks.example.net/x' } });
      expect([r.status, r.body.error.code]).toEqual([400, 'invalid_request']);
      expect(r.body.error.message.match(/webhook\.secret/g)).toHaveLength(1);
      expect(r.body.error.message).toContain('whsec_');
    });

    it('purge=1 is purge=true, purge=0 is a cancel', async () => {
      const http = () => request(app.getHttpServer());
      // A job of a loopback URL this caller may not reach ends at once, failed.
      const sub = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url('/a') }] });
      await waitForJob(app, sub.body.id);
      expect((await http().delete(`/v1/batch/${sub.body.id}?purge=0`).set(fleet)).status).toBe(409);
      expect((await http().delete(`/v1/batch/${sub.body.id}?purge=1`).set(fleet)).status).toBe(204);
      expect((await http().get(`/v1/batch/${sub.body.id}`).set(fleet)).status).toBe(404);
    });

    it('the loopback refusal tells a fleet caller which setting lets it through', async () => {
      const r = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/a') });
      expect([r.status, r.body.error.code]).toEqual([403, 'blocked_address']);
      expect(r.body.error.hint).toContain('SIFT_FLEET_ALLOW=127.0.0.1/32');
    });
  });

  it('an EventSource stops after the terminal event: the stream ends with it, and asking again is 204', async () => {
    const { app } = await createTestApp();
    try {
      await app.listen(0, '127.0.0.1');
      const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
      // A job of a loopback URL this caller may not reach: it fails at once.
      const sub = await request(app.getHttpServer())
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url('/a') }] });
      await waitForJob(app, sub.body.id);
      let opens = 0;
      const seen: string[] = [];
      const es = new EventSource(`${base}/v1/batch/${sub.body.id}/events`, {
        fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...fleet } }),
      });
      es.addEventListener('open', () => opens++);
      for (const type of ['batch.queued', 'batch.running', 'target.failed', 'batch.failed']) {
        es.addEventListener(type, (e) => seen.push(e.type));
      }
      try {
        // It reconnects once after the stream ends (as it must), is told 204, and stops.
        await waitUntil(
          () => (es.readyState === EventSource.CLOSED ? true : undefined),
          'the EventSource to stop',
          15_000,
        );
      } finally {
        es.close();
      }
      expect(seen.at(-1)).toBe('batch.failed');
      expect(seen.filter((t) => t === 'batch.failed')).toHaveLength(1);
      expect(opens).toBe(1);
      const again = await request(app.getHttpServer())
        .get(`/v1/batch/${sub.body.id}/events`)
        .set(fleet)
        .set('Accept', 'text/event-stream')
        .set('Last-Event-ID', '1000');
      expect(again.status).toBe(204);
    } finally {
      await app.close();
    }
  }, 30_000);

  it('one Idempotency-Key rule for submit and retry: replayed while the job stands, submitted anew once it failed', async () => {
    let flaky = 0;
    const site = await new Fixture({
      // Drops the first three connections (a target fails after its two retries), then serves.
      '/flaky': (req, res) =>
        flaky++ < 3 ? req.socket.destroy() : send(200, 'text/html', articleHtml('Flaky', 6))(req, res),
      '/*': send(200, 'text/html', articleHtml('A page', 6)),
    }).start();
    const { app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.1' });
    const http = () => request(app.getHttpServer());
    const submit = (key: string, urls: string[]) =>
      http()
        .post('/v1/batch')
        .set(fleet)
        .set('Idempotency-Key', key)
        .send({ targets: urls.map((url) => ({ url })) });
    const retry = (id: string, key: string) =>
      http().post(`/v1/batch/${id}/retry`).set(fleet).set('Idempotency-Key', key);
    // Only 127.0.0.1 is allowed: a target on 127.0.0.2 fails at once.
    const blocked = site.url('/x').replace('127.0.0.1', '127.0.0.2');
    try {
      // Submit: a job that stands (partial) is replayed; a failed one is submitted anew.
      const a = await submit('s1', [site.url('/ok'), blocked]);
      expect((await waitForJob(app, a.body.id)).status).toBe('partial');
      const again = await submit('s1', [site.url('/ok'), blocked]);
      expect([again.status, again.body.id, again.headers['idempotent-replayed']]).toEqual([
        200,
        a.body.id,
        'true',
      ]);
      const f = await submit('s2', [blocked]);
      expect((await waitForJob(app, f.body.id)).status).toBe('failed');
      const anew = await submit('s2', [blocked]);
      expect(anew.status).toBe(202);
      expect(anew.body.id).not.toBe(f.body.id);
      expect((await submit('s1', [site.url('/other')])).status).toBe(409);

      // Retry, the same rule: a child that stands is replayed, a failed child is made anew.
      const p = await submit('s3', [site.url('/flaky'), site.url('/ok2')]);
      expect((await waitForJob(app, p.body.id)).status).toBe('partial');
      const child = await retry(p.body.id, 'r1');
      expect(child.status).toBe(202);
      expect((await waitForJob(app, child.body.id)).status).toBe('done');
      const replayed = await retry(p.body.id, 'r1');
      expect([replayed.status, replayed.body.id]).toEqual([200, child.body.id]);
      const failedChild = await retry(a.body.id, 'r2');
      expect((await waitForJob(app, failedChild.body.id)).status).toBe('failed');
      const newChild = await retry(a.body.id, 'r2');
      expect(newChild.status).toBe(202);
      expect(newChild.body.id).not.toBe(failedChild.body.id);
    } finally {
      await app.close();
      await site.stop();
    }
  }, 60_000);

  it('the verdict judges the page, not the selection: a short part of a full page is ok, an empty page empty', async () => {
    const site = await new Fixture({
      '/full': send(
        200,
        'text/html',
        articleHtml('A full page', 8).replace('<article>', '<article><p class="byline">By A. Writer</p>'),
      ),
      '/bare': send(200, 'text/html', '<html><body><p class="byline">By A. Writer</p></body></html>'),
    }).start();
    const { app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.1' });
    try {
      const pick = (path: string) =>
        request(app.getHttpServer())
          .post('/v1/fetch')
          .set(fleet)
          .send({ url: site.url(path), include_selectors: ['.byline'], format: 'text' });
      const full = await pick('/full');
      expect([full.status, full.body.content, full.body.verdict]).toEqual([200, 'By A. Writer', 'ok']);
      const bare = await pick('/bare');
      expect([bare.body.content, bare.body.verdict]).toEqual(['By A. Writer', 'empty']);
    } finally {
      await app.close();
      await site.stop();
    }
  });

  it('SIFT_FLEET_ALLOW takes a bare address, as that one address', async () => {
    const { app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.1' });
    try {
      const ok = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/a') });
      expect([ok.status, ok.body.status]).toEqual([200, 200]);
      const other = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/a').replace('127.0.0.1', '127.0.0.2') });
      expect(other.body.error.code).toBe('blocked_address');
    } finally {
      await app.close();
    }
  });
});
