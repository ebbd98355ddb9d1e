import type { INestApplication } from '@nestjs/common';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import request from 'supertest';
import { createTestApp, tmpDbPath, waitUntil, fleet, restricted } from '../support/app';
import { RunnerService } from '../../src/runner/runner.service';
import type { Resolver } from '../../src/fetch/fetcher';

/**
 * The longest the event loop of this process (the app runs in it) may be held during one request.
 * The SPEC's bound is 50 ms for sift's own process. Here jest shares the thread (its heap of
 * several hundred MB makes each young-generation collection 10-50 ms) and the client and its
 * serializing run in the same process; other suites may keep both cores busy. Measured with this
 * suite alone, on two cores: 30-60 ms; inside the whole suite (its two workers) or beside other
 * runs: 160-440 ms, jest's own collections included. Before the requests were sliced: 1,000-1,500
 * ms for the fleet submit and the NDJSON stream, 700 ms for the refused one. 500 ms proves those
 * are gone with a margin that holds on a loaded machine; the sift process's own bound is measured
 * by test/e2e/main-thread.spec.ts and bench/.
 */
const MAX_LOOP_DELAY_MS = 500;

/** Lookups that never answer: the runner is stopped anyway, and no request here fetches. */
const silent: Resolver = () => new Promise(() => undefined);

const OPTIONS = [
  { format: 'text', timeout_ms: 30000 },
  { formats: ['markdown', 'links'], max_age_s: 60, include_selectors: ['main', 'article > p'] },
  { render: 'never', max_bytes: 100000 },
];
const urls = (n: number, tag: string, pad = '') =>
  Array.from({ length: n }, (_, i) => `https://pages.test/${tag}/${i}?q=${i}${pad}`);
/** SPEC "The main thread stays free": the heaviest requests within the documented limits. */
describe('no request holds the event loop', () => {
  let app: INestApplication;
  const http = () => request(app.getHttpServer());

  /** The loop's longest delay while the request runs; its body is serialized before. */
  async function held(
    send: () => request.Test,
    body?: unknown,
  ): Promise<{ ms: number; res: request.Response }> {
    const json = body === undefined ? undefined : JSON.stringify(body);
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    // The histogram records from its second tick on: measuring starts once it has recorded one.
    const ticked = (after: number) => () => (loop.count > after ? true : undefined);
    await waitUntil(ticked(0), 'the loop histogram to record', 5000, 1);
    const res = await (json === undefined
      ? send()
      : send().set('Content-Type', 'application/json').send(json));
    // A hold at the very end shows in the tick after it.
    await waitUntil(ticked(loop.count), 'a tick of the loop histogram after the answer', 5000, 1);
    loop.disable();
    if (process.env.LOOP_REPORT) process.stderr.write(`LOOP ${(loop.max / 1e6).toFixed(1)} ms\n`);
    return { ms: loop.max / 1e6, res };
  }

  beforeAll(async () => {
    ({ app } = await createTestApp(
      { SIFT_DB: tmpDbPath(), SIFT_FLEET_MAX_LIVE_JOBS: '100' },
      { resolver: silent },
    ));
    // The requests are measured alone: no fetch runs beside them.
    await app.get(RunnerService).stop();
    // What runs once per process (ts-jest compiling modules, first requests) is not measured.
    await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: 'https://pages.test/w' }] });
  });
  afterAll(() => app.close());

  it('a fleet submit of 10,000 targets, each with its options', async () => {
    const targets = urls(10_000, 'a').map((url, i) => ({ url, options: OPTIONS[i % 3] }));
    const { ms, res } = await held(() => http().post('/v1/batch').set(fleet), { targets });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ targets_total: 10_000, status: 'queued' });
    expect(ms).toBeLessThan(MAX_LOOP_DELAY_MS);
  }, 60_000);

  it('a restricted submit of 1,000 targets with options, 2 MB of URLs', async () => {
    const targets = urls(1000, 'b', `&${'p'.repeat(1900)}`).map((url, i) => ({
      url,
      options: OPTIONS[i % 3],
    }));
    const { ms, res } = await held(() => http().post('/v1/batch').set(restricted), { targets });
    expect(res.status).toBe(202);
    expect(ms).toBeLessThan(MAX_LOOP_DELAY_MS);
  }, 60_000);

  it('10,000 targets refused for the last one’s options, naming it', async () => {
    const targets = urls(10_000, 'c').map((url, i) => ({
      url,
      options: i === 9_999 ? { format: 'pdf' } : OPTIONS[i % 3],
    }));
    const { ms, res } = await held(() => http().post('/v1/batch').set(fleet), { targets });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'targets.9999.options.format must be one of the following values: markdown, text, html',
    );
    expect(ms).toBeLessThan(MAX_LOOP_DELAY_MS);
  }, 60_000);
});
