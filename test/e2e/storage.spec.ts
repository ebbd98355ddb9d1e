import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { Dcache } from '../../src/dcache';
import { RunnerService } from '../../src/runner/runner.service';
import { createTestApp, waitForJob, waitUntil, tmpDbPath, fleet } from '../support/app';
import { Fixture, slowArticle } from '../support/fixture';

/** The database reaching its size limit (PRAGMA max_page_count): clear 503s, nothing lost, recovery. */
describe('a full database', () => {
  let app: INestApplication;
  let fx: Fixture;
  let dcache: Dcache;
  const http = () => request(app.getHttpServer());
  const fill = () => {
    const pages = dcache.sqlite!.pragma('page_count', { simple: true }) as number;
    dcache.sqlite!.pragma(`max_page_count = ${pages}`);
  };
  const makeRoom = () => dcache.sqlite!.pragma('max_page_count = 1073741823');

  const finished = (id: string) => waitForJob(app, id);
  // Longer than waitForJob's 60 s: a job that does not end is told with what it last read, not by
  // jest's 30 s (which a loaded machine once reached, the first job's extraction worker starting).
  const LONG = 90_000;

  beforeAll(async () => {
    fx = await new Fixture({
      // Slow pages: a job is still running when the database fills.
      '/p/*': slowArticle(30, 'Stored words of a page. '.repeat(200)),
      // The same at once: a job of many pages takes no longer than its work.
      '/f/*': slowArticle(0, 'Stored words of a page. '.repeat(200)),
    }).start();
    ({ app } = await createTestApp({ SIFT_DB: tmpDbPath(), SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
    dcache = app.get(Dcache);
  });
  afterAll(async () => {
    makeRoom();
    await app.close();
    await fx.stop();
  });

  it(
    'answers writes with 503 storage_full, keeps what was stored, and recovers when room is made',
    async () => {
      const before = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [{ url: fx.url('/p/kept-0') }, { url: fx.url('/p/kept-1') }] });
      await finished(before.body.id);
      const kept = (await http().get(`/v1/batch/${before.body.id}/results`).set(fleet)).body;

      fill();
      // Enough rows that they cannot fit in the pages the database already has.
      const targets = Array.from({ length: 300 }, (_, i) => ({ url: fx.url(`/f/full-${i}`) }));
      const refused = await http().post('/v1/batch').set(fleet).send({ targets });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('storage_full');
      expect(refused.body.error.hint).toMatch(/disk|limit/);
      expect(refused.headers['retry-after']).toBeDefined();
      // A fetch still answers: the page is served even though the cache cannot keep it.
      const page = await http()
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/p/while-full') });
      expect(page.status).toBe(200);
      expect(page.body.cached).toBe(false);
      // What was stored before is intact.
      expect((await http().get(`/v1/batch/${before.body.id}/results`).set(fleet)).body).toEqual(kept);
      expect(dcache.sqlite!.pragma('integrity_check', { simple: true })).toBe('ok');

      makeRoom();
      const accepted = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: targets.slice(0, 40) });
      expect(accepted.status).toBe(202);
      expect(await finished(accepted.body.id)).toMatchObject({ status: 'done', targets_done: 40 });
    },
    LONG,
  );

  it(
    'a job running when the database fills pauses, loses no result, and finishes after room is made',
    async () => {
      const targets = Array.from({ length: 40 }, (_, i) => ({ url: fx.url(`/p/pause-${i}`) }));
      const sub = await http().post('/v1/batch').set(fleet).send({ targets });
      expect(sub.status).toBe(202);
      fill();
      const runner = app.get(RunnerService);
      await waitUntil(
        () => (runner.stats.paused ? true : undefined),
        'the runner to pause for the full database',
      );
      const during = (await http().get(`/v1/batch/${sub.body.id}`).set(fleet)).body;
      expect(during.targets_done).toBeLessThan(40);
      makeRoom();
      const job = await finished(sub.body.id);
      expect(job).toMatchObject({ status: 'done', targets_done: 40, targets_failed: 0 });
      const results = (await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet)).body.results;
      expect(
        results.every(
          (r: { status: string; result: { content: string } }, i: number) =>
            r.status === 'done' && r.result.content.includes(`/p/pause-${i}`),
        ),
      ).toBe(true);
      expect(dcache.sqlite!.pragma('integrity_check', { simple: true })).toBe('ok');
    },
    LONG,
  );
});
