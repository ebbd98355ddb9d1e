import * as path from 'node:path';
import type { INestApplication, LoggerService } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, waitForJob, fleet } from '../support/app';
import { articleHtml, Fixture, html, send } from '../support/fixture';

/** Collects what the app logs. */
class Captured implements LoggerService {
  readonly lines: string[] = [];
  log = (m: unknown) => void this.lines.push(JSON.stringify(m));
  error = (m: unknown) => void this.lines.push(JSON.stringify(m));
  warn = (m: unknown) => void this.lines.push(JSON.stringify(m));
}

describe('faults of sift itself are not upstream faults', () => {
  let app: INestApplication;
  let fx: Fixture;
  const logs = new Captured();

  beforeAll(async () => {
    fx = await new Fixture({
      '/explode': send(200, 'text/html', html('<article><p>EXPLODE here</p></article>')),
      '/explode-too': send(200, 'text/html', html('<article><p>EXPLODE again</p></article>')),
      '/fine': send(200, 'text/html', articleHtml('Fine Page', 4)),
    }).start();
    ({ app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.0/8' },
      { extractModule: path.join(__dirname, '..', 'fixtures', 'throwing-extract.ts'), logger: logs },
    ));
  });

  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  it('in a batch, an exception inside extraction is extraction_failed, fetched once, not retried', async () => {
    const job = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/explode') }, { url: fx.url('/fine') }] });
    expect(job.status).toBe(202);
    const done = await waitForJob(app, job.body.id as string);
    expect(done).toMatchObject({ status: 'partial', targets_failed: 1 });
    const r = await request(app.getHttpServer()).get(`/v1/batch/${job.body.id}/results`).set(fleet);
    expect(r.body.results[0]).toMatchObject({ status: 'failed', error: { code: 'extraction_failed' } });
    expect(r.body.results[0].error.message).not.toContain('EXPLODE');
    expect(r.body.results[1]).toMatchObject({ status: 'done' });
    expect(fx.hitCount('/explode')).toBe(1);
    expect(logs.lines.some((l) => l.includes('extraction_failed') && l.includes('EXPLODE'))).toBe(true);
  });

  it("a target's user:password@ is in neither its result nor the fault log", async () => {
    const withUser = (p: string) => fx.url(p).replace('http://', 'http://user:s3cret-pw@');
    const job = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: withUser('/explode') }, { url: withUser('/fine') }] });
    await waitForJob(app, job.body.id as string);
    const json = await request(app.getHttpServer()).get(`/v1/batch/${job.body.id}/results`).set(fleet);
    const ndjson = await request(app.getHttpServer())
      .get(`/v1/batch/${job.body.id}/results`)
      .set({ ...fleet, Accept: 'application/x-ndjson' });
    expect(json.body.results.map((r: { url: string }) => r.url)).toEqual([
      fx.url('/explode'),
      fx.url('/fine'),
    ]);
    expect(ndjson.text).toContain(fx.url('/fine'));
    expect(`${JSON.stringify(json.body)}${ndjson.text}`).not.toContain('s3cret-pw');
    expect(logs.lines.some((l) => l.includes('extraction_failed'))).toBe(true);
    expect(logs.lines.filter((l) => l.includes('s3cret-pw'))).toEqual([]);
  });

  it('on /v1/fetch it is 500 internal, the details in the log with the request id, not in the answer', async () => {
    const r = await request(app.getHttpServer())
      .post('/v1/fetch')
      .set({ ...fleet, 'X-Request-Id': 'req-explode-1' })
      .send({ url: fx.url('/explode-too') });
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe('internal');
    expect(JSON.stringify(r.body)).not.toContain('EXPLODE');
    expect(r.body.error.hint).toContain('req-explode-1');
    expect(logs.lines.some((l) => l.includes('req-explode-1') && l.includes('EXPLODE'))).toBe(true);
    expect(fx.hitCount('/explode-too')).toBe(1);
  });
});
