import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { Renderer } from '../../src/render/renderer';
import { createTestApp, waitUntil, fleet } from '../support/app';
import { Fixture, html, send } from '../support/fixture';
import { onePage } from '../support/pdf-documents';
import { idleOperators } from '../support/pdf-hostile';

/**
 * One caller cannot take a pool every caller shares. A hostile caller fills the browser
 * pages and the document parsers with work that would hold them for its whole deadline; another
 * caller's ordinary request is answered in its own time plus a small bound, and /healthz within
 * 1 s throughout. The bounds hold with both cores busy (the suite's own workers, or a CPU hog).
 */
const HOSTILE = 'hostile-token-49';
const OTHER = 'other-token-49';
const hostile = { Authorization: `Bearer ${HOSTILE}` };
const other = { Authorization: `Bearer ${OTHER}` };

/**
 * What another caller's request may take beyond its time alone: the hostile work given up for it
 * (a browser context closed, a parser process killed and a new one started: under a second
 * alone) and two busy cores.
 */
const SMALL_BOUND_MS = 5000;

describe('one caller cannot hold a shared pool', () => {
  let app: INestApplication;
  let fx: Fixture;
  const http = () => request(app.getHttpServer());
  let smallPdf: Buffer;
  const idle = idleOperators(500, 120_000);

  beforeAll(async () => {
    smallPdf = await onePage();
    fx = await new Fixture({
      // Spins in script for ever: a render of it holds its page until its deadline.
      '/spin': send(200, 'text/html', html('<p>spinning</p><script>for (;;) {}</script>', 'Spin')),
      // A page whose article only its script writes.
      '/ordinary': send(
        200,
        'text/html',
        html(
          `<div id="app"></div><script>document.getElementById('app').innerHTML = '<article><h1>Ordinary</h1><p>${'Words of an ordinary page. '.repeat(20)}</p></article>';</script>`,
          'Ordinary',
        ),
      ),
      '/idle.pdf': send(200, 'application/pdf', idle),
      '/small.pdf': (req, res) => send(200, 'application/pdf', smallPdf)(req, res),
    }).start();
    ({ app } = await createTestApp({
      SIFT_TOKENS: `${HOSTILE}:hostile:fleet,${OTHER}:other:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RENDER_PAGES: '2',
      SIFT_FLEET_RENDER_CONCURRENCY: '4',
      SIFT_PDF_MAX_CPU_MS: '5000',
    }));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await fx?.stop();
  });

  /** Until `attack` settles: /healthz, asked again as soon as it answered; the time each took. */
  async function healthzWhile(attack: Promise<unknown>): Promise<number[]> {
    let over = false;
    void attack.then(
      () => (over = true),
      () => (over = true),
    );
    const times: number[] = [];
    do {
      const started = performance.now();
      expect((await http().get('/healthz')).status).toBe(200);
      times.push(performance.now() - started);
    } while (!over);
    return times;
  }

  /** Whether every one of `all` has settled yet, asked later. */
  function settled(all: Promise<unknown>[]): () => boolean {
    let over = false;
    void Promise.allSettled(all).then(() => (over = true));
    return () => over;
  }

  /** The other caller's request and how long it took. */
  async function timed(body: Record<string, unknown>) {
    const started = performance.now();
    const r = await http().post('/v1/fetch').set(other).send(body);
    return { r, ms: performance.now() - started };
  }

  it("four renders spinning in script from one caller do not hold another caller's render", async () => {
    const ordinary = (n: number) => ({ url: fx.url(`/ordinary?n=${n}`), render: 'always', format: 'text' });
    // The browser is up, and the other caller's render timed alone.
    await timed(ordinary(0));
    const alone = await timed(ordinary(1));
    expect(alone.r.status).toBe(200);
    const renderer = app.get(Renderer);
    // Past the longest the other caller's render may take (the bound below) by 3 s: if it is
    // served within its bound, the spinning renders still hold their pages then. Each spins a core
    // until this deadline.
    const spinMs = Math.ceil(alone.ms + SMALL_BOUND_MS + 3000);
    const spins = Array.from({ length: 4 }, (_, i) =>
      http()
        .post('/v1/fetch')
        .set(hostile)
        .send({ url: fx.url(`/spin?n=${i}`), render: 'always', timeout_ms: spinMs })
        .then((r) => r.status),
    );
    const spinsOver = settled(spins);
    await waitUntil(() => renderer.busy === 2 || undefined, 'the spinning renders to hold both pages');
    const probe = timed(ordinary(2));
    const healthz = await healthzWhile(probe);
    const { r, ms } = await probe;
    // Served while the spinning renders still held their pages' places, not after their deadline.
    expect(spinsOver()).toBe(false);
    expect(r.status).toBe(200);
    expect(r.body.content).toContain('Words of an ordinary page');
    expect(ms).toBeLessThan(alone.ms + SMALL_BOUND_MS);
    expect(Math.max(...healthz)).toBeLessThan(1000);
    // The hostile renders end at their own deadline, whatever was given up on the way.
    for (const status of await Promise.all(spins)) expect(status).toBe(504);
  }, 120_000);

  it("three documents that hold a parser from one caller do not hold another caller's document", async () => {
    const small = (n: number) => ({ url: fx.url(`/small.pdf?n=${n}`), format: 'text', max_age_s: 0 });
    await timed(small(0));
    const alone = await timed(small(1));
    expect(alone.r.status).toBe(200);
    const costly = Array.from({ length: 3 }, (_, i) =>
      http()
        .post('/v1/fetch')
        .set(hostile)
        .send({ url: fx.url(`/idle.pdf?n=${i}`), format: 'text', timeout_ms: 60_000 })
        .then((r) => r.body),
    );
    const costlyOver = settled(costly);
    // Both parsers are busy with the hostile documents before the other caller asks.
    await waitUntil(
      () => (fx.hitCount('/idle.pdf') === 3 ? true : undefined),
      'the hostile documents to be fetched',
    );
    const probe = timed(small(2));
    const healthz = await healthzWhile(probe);
    const { r, ms } = await probe;
    // Served while the hostile documents still held both parsers, not after their CPU budget.
    expect(costlyOver()).toBe(false);
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.content).toContain('Annual Report');
    expect(ms).toBeLessThan(alone.ms + SMALL_BOUND_MS);
    expect(Math.max(...healthz)).toBeLessThan(1000);
    // Each hostile document ends at its CPU budget (SIFT_PDF_MAX_CPU_MS, 5 s here), not its deadline.
    for (const body of await Promise.all(costly)) {
      expect(body.error).toMatchObject({ code: 'document_too_complex' });
      expect(body.error.message).toMatch(/5000 ms of CPU time/);
    }
  }, 180_000);
});

describe('SIFT_PDF_MAX_CPU_MS bounds the CPU time of a document', () => {
  it('a document past its CPU budget is document_too_complex long before its deadline', async () => {
    const fx = await new Fixture({
      '/idle.pdf': send(200, 'application/pdf', idleOperators(500, 120_000)),
    }).start();
    const { app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_PDF_MAX_CPU_MS: '1000' });
    try {
      const r = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/idle.pdf'), format: 'text', timeout_ms: 120_000 });
      expect(r.status).toBe(502);
      expect(r.body.error).toMatchObject({ code: 'document_too_complex' });
      expect(r.body.error.message).toMatch(/over 1000 ms of CPU time \(at page \d+\)/);
    } finally {
      await app.close();
      await fx.stop();
    }
  }, 120_000);
});
