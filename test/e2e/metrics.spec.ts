import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { createTestApp, waitForJob, FLEET_TOKEN } from '../support/app';
import { Fixture, send } from '../support/fixture';

const fleet = { Authorization: `Bearer ${FLEET_TOKEN}` };

function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

describe('GET /metrics', () => {
  let app: INestApplication;
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({ '/plain': send(200, 'text/plain', 'hello') }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  it('counts fetches by outcome, cache hits and misses, jobs and targets', async () => {
    const http = () => request(app.getHttpServer());
    await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/plain') });
    await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/plain') });
    await http().post('/v1/fetch').set(fleet).send({ url: 'http://10.0.0.1/' });
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/plain') }, { url: 'http://10.0.0.2/' }] });
    expect(await waitForJob(app, sub.body.id)).toMatchObject({ status: 'partial' });
    const r = await http().get('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/plain/);
    const t = r.text;
    expect(value(t, 'sift_fetches_total{outcome="ok",verdict="ok"}')).toBe(3);
    expect(value(t, 'sift_fetches_total{outcome="blocked_address",verdict="none"}')).toBe(2);
    expect(value(t, 'sift_cache{stat="hits"}')).toBe(2);
    expect(value(t, 'sift_cache{stat="misses"}')).toBe(3); // the first fetch and both blocked ones
    expect(value(t, 'sift_batch_jobs{status="partial"}')).toBe(1);
    expect(value(t, 'sift_batch_targets_total{status="done"}')).toBe(1);
    expect(value(t, 'sift_batch_targets_total{status="failed"}')).toBe(1);
    expect(value(t, 'sift_runner_in_flight')).toBe(0);
    expect(value(t, 'sift_runner_queue_depth')).toBe(0);
    expect(value(t, 'sift_fetch_duration_seconds_count{cached="true"}')).toBe(2);
    expect(t).toMatch(/^sift_store_misses\{accessor="batchJob"\} \d+$/m);
    expect(t).toMatch(/^sift_process_resident_memory_bytes \d+/m);
  });
});
