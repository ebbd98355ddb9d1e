import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, tableResolver, fleet } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

/**
 * Per-host state is kept under the normalised host: a spelling with a trailing dot or in capitals
 * is the same host, so it cannot escape a pause the host asked for (SPEC "Safe under a hostile
 * caller").
 */
describe('per-host state under the normalised host', () => {
  let app: INestApplication;
  let fx: Fixture;

  beforeAll(async () => {
    fx = await new Fixture({
      '/busy': send(429, 'text/plain', 'slow down', { 'retry-after': '60' }),
      '/to-busy': (req, res) => {
        res.writeHead(302, { location: `http://to.test:${new URL(fx.url('/')).port}/busy` });
        res.end();
      },
      '/*': send(200, 'text/html', html('<article><p>A page with words enough to keep.</p></article>')),
    }).start();
    const local = ['127.0.0.1'];
    const resolver = tableResolver({ 'fixture.test': local, 'from.test': local, 'to.test': local });
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }, { resolver }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  const fetchUrl = (url: string) =>
    request(app.getHttpServer()).post('/v1/fetch').set(fleet).send({ url, robots: false, max_age_s: 0 });

  it('a pause asked by fixture.test holds for fixture.test. and FIXTURE.TEST', async () => {
    const port = new URL(fx.url('/')).port;
    expect((await fetchUrl(`http://fixture.test:${port}/busy`)).body.status).toBe(429);
    for (const host of ['fixture.test.', 'FIXTURE.TEST', 'Fixture.Test.']) {
      const r = await fetchUrl(`http://${host}:${port}/page`);
      expect([host, r.status, r.body.error?.code]).toEqual([host, 429, 'host_backoff']);
    }
    expect(fx.hitCount('/page')).toBe(0);
  });

  it('a Retry-After pauses the host that answered, not the one the redirect started from', async () => {
    const port = new URL(fx.url('/')).port;
    const r = await fetchUrl(`http://from.test:${port}/to-busy`);
    expect([r.body.status, r.body.final_url]).toEqual([429, `http://to.test:${port}/busy`]);
    expect((await fetchUrl(`http://from.test:${port}/a`)).status).toBe(200);
    const paused = await fetchUrl(`http://to.test:${port}/b`);
    expect([paused.status, paused.body.error?.code]).toEqual([429, 'host_backoff']);
    expect(fx.hitCount('/b')).toBe(0);
  });
});
