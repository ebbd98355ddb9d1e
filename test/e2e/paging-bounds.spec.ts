import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createPgDatabase } from '../support/backends';
import { createTestApp, waitForJob, fleet } from '../support/app';

/**
 * Paging values past what the database stores (an idx or seq is a 32-bit integer, a cursor's time
 * a 64-bit one) are 400 invalid_request on both databases, never 500 (SPEC "Safe under a hostile
 * caller": out-of-range paging values are 400).
 */
describe.each(['sqlite', 'postgres'] as const)('paging values out of range, on %s', (backend) => {
  let app: INestApplication;
  let drop: (() => Promise<void>) | undefined;
  let id: string;
  const get = (path: string, headers: Record<string, string> = {}) =>
    request(app.getHttpServer()).get(path).set(fleet).set(headers);

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (backend === 'postgres') {
      const pg = await createPgDatabase();
      drop = pg.drop;
      env.SIFT_DATABASE_URL = pg.url;
    }
    ({ app } = await createTestApp(env));
    const sub = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: 'not a url' }], ignore_invalid_urls: true });
    id = sub.body.id;
    await waitForJob(app, id);
  });
  afterAll(async () => {
    await app.close();
    await drop?.();
  });

  const cursor = (createdAt: number) => Buffer.from(JSON.stringify([createdAt, 'x'])).toString('base64url');

  it.each([
    ['results after', () => `/v1/batch/${id}/results?after=99999999999`],
    ['events after', () => `/v1/batch/${id}/events?after=99999999999`],
    ['a job list cursor', () => `/v1/batch?cursor=${cursor(1e20)}`],
  ])('%s past the stored range: 400', async (_, path) => {
    const r = await get(path());
    expect([r.status, r.body.error?.code]).toEqual([400, 'invalid_request']);
  });

  it('a Last-Event-ID past the stored range: 400', async () => {
    const r = await get(`/v1/batch/${id}/events`, {
      Accept: 'text/event-stream',
      'Last-Event-ID': '99999999999',
    });
    expect([r.status, r.body.error?.code]).toEqual([400, 'invalid_request']);
  });

  it('the largest values that fit still page normally', async () => {
    expect((await get(`/v1/batch/${id}/results?after=2147483647`)).body.results).toEqual([]);
    expect((await get(`/v1/batch/${id}/events?after=2147483647`)).body.events).toEqual([]);
  });
});
