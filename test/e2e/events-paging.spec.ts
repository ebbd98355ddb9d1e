import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, waitForJob, fleet } from '../support/app';
import { Fixture, send } from '../support/fixture';

describe('GET /v1/batch/{id}/events, page by page', () => {
  let app: INestApplication;
  let fx: Fixture;

  beforeAll(async () => {
    fx = await new Fixture({ '/p': send(200, 'text/plain', 'one page for every target') }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });

  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  it('a 2,500-target job: pages of `limit` events, `next` until null, no gap', async () => {
    const targets = Array.from({ length: 2500 }, () => ({ url: fx.url('/p') }));
    const job = await request(app.getHttpServer()).post('/v1/batch').set(fleet).send({ targets });
    expect(job.status).toBe(202);
    const id = job.body.id as string;
    await waitForJob(app, id, fleet, ['done']);
    const seqs: number[] = [];
    const sizes: number[] = [];
    let after = 0;
    for (let pages = 0; pages < 100; pages++) {
      const r = await request(app.getHttpServer())
        .get(`/v1/batch/${id}/events?after=${after}&limit=700`)
        .set(fleet);
      expect(r.status).toBe(200);
      seqs.push(...r.body.events.map((e: { seq: number }) => e.seq));
      sizes.push(r.body.events.length);
      if (r.body.next === null) break;
      expect(r.body.next).toBe(seqs[seqs.length - 1]);
      after = r.body.next;
    }
    // queued, running, 2,500 target events, done.
    expect(seqs).toEqual(Array.from({ length: 2503 }, (_, i) => i + 1));
    expect(sizes).toEqual([700, 700, 700, 403]);
    // Without limit, a page is at most 1,000 events and says where to go on.
    const first = await request(app.getHttpServer()).get(`/v1/batch/${id}/events`).set(fleet);
    expect(first.body.events).toHaveLength(1000);
    expect(first.body.next).toBe(1000);
    const bad = await request(app.getHttpServer()).get(`/v1/batch/${id}/events?limit=1001`).set(fleet);
    expect(bad.status).toBe(400);
  }, 60_000);
});
