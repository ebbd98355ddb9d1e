import * as net from 'node:net';
import request from 'supertest';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Renderer } from '../../src/render/renderer';
import { createTestApp, waitForJob, fleet } from '../support/app';
import { articleHtml, Fixture, html, send } from '../support/fixture';
import { onePage } from '../support/pdf-documents';

const WORDS =
  'This article was written into the page by its own script once it had loaded, and it has words enough to be read as the content of a real article by the extractor, with commas, clauses and more words after them, so that the verdict on it is ok and not empty at all.';

/** A script shell: an empty app root, and a script of the same site that writes the article into it. */
const SHELL = html('<div id="root"></div><script src="/shell.js"></script>', 'A script shell');
const SHELL_JS = `document.getElementById('root').innerHTML = '<article><h1>Inserted</h1><p>${WORDS}</p></article>';`;

/** A static article that also loads a script: a browser would fetch /article.js, a static fetch never. */
const ARTICLE = articleHtml('A static article', 6).replace(
  '</body>',
  '<script src="/article.js"></script></body>',
);

describe('rendering through the app (real Chromium, pages on 127.0.0.2)', () => {
  let app: INestApplication;
  let fx: Fixture;
  let secret: net.Server;
  let secretConnections = 0;
  const http = () => request(app.getHttpServer());
  const post = (body: Record<string, unknown>) => http().post('/v1/fetch').set(fleet).send(body);

  beforeAll(async () => {
    fx = new Fixture({
      '/shell': send(200, 'text/html', SHELL),
      '/shell.js': send(200, 'text/javascript', SHELL_JS),
      '/article': send(200, 'text/html', ARTICLE),
      '/article.js': send(200, 'text/javascript', '/* nothing */'),
      // Taller than the viewport, and far taller than a screenshot may be.
      '/tall': send(200, 'text/html', html('<div style="height:3000px">A tall page</div>', 'Tall')),
      '/endless': send(
        200,
        'text/html',
        html('<div style="height:100000px">An endless page</div>', 'Endless'),
      ),
      '/doc.pdf': (req, res) => void onePage().then((pdf) => send(200, 'application/pdf', pdf)(req, res)),
      // Its paragraph appears a second after load.
      '/slow': send(
        200,
        'text/html',
        html(
          '<div id="app"></div><script>setTimeout(() => { document.getElementById("app").innerHTML = "<p class=ready>ready at last</p>"; }, 1000);</script>',
          'Slow',
        ),
      ),
      // A page reaching for the secret server on 127.0.0.3 in every way it can.
      '/attack': (req, res) => {
        const t = `http://127.0.0.3:${fx.port}`;
        const body =
          `<div id="root"></div><img src="${t}/img"><iframe src="${t}/frame"></iframe>` +
          `<script>fetch('${t}/fetch').catch(() => {}); try { new WebSocket('ws://127.0.0.3:${fx.port}/ws'); } catch (e) {}</script>`;
        send(200, 'text/html', html(body, 'Attack'))(req, res);
      },
    });
    await fx.start('127.0.0.2');
    secret = net.createServer((s) => {
      secretConnections++;
      s.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecret');
    });
    await new Promise<void>((resolve) => secret.listen(fx.port, '127.0.0.3', resolve));
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.2/32',
      SIFT_FLEET_RENDER_CONCURRENCY: '1',
      SIFT_RENDER_PAGES: '2',
      SIFT_RENDER_RECYCLE_AFTER: '100',
      SIFT_RENDER_MAX_MEMORY: '2147483648',
    }));
  });

  afterAll(async () => {
    await app?.close();
    await new Promise((resolve) => secret?.close(resolve));
    await fx?.stop();
  });

  it('auto does not render a static article: rendered false, and no browser fetched its script', async () => {
    const r = await post({ url: fx.url('/article'), format: 'text' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ rendered: false, verdict: 'ok' });
    expect(r.body.render).toBeUndefined();
    expect(r.body.content).toContain('Paragraph 5 of the article');
    expect(fx.hits.get('/article.js') ?? 0).toBe(0);
    expect(app.get(Renderer).processes()).toEqual([]);
  });

  it('/healthz says rendering is available', async () => {
    const r = await http().get('/healthz');
    expect(r.body).toMatchObject({ ok: true, render: true });
  });

  it('auto renders a script shell: the content its script wrote, rendered true, its requests counted', async () => {
    const r = await post({ url: fx.url('/shell'), format: 'text' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ rendered: true, verdict: 'ok', render: { blocked: 0 } });
    expect(r.body.render.requests).toBeGreaterThanOrEqual(1);
    expect(r.body.content).toContain('written into the page by its own script');
    // never: the shell as served, under its own cache entry.
    const n = await post({ url: fx.url('/shell'), format: 'text', render: 'never' });
    expect(n.body).toMatchObject({ rendered: false, verdict: 'challenge', cached: false });
    expect(n.body.content).not.toContain('written into the page');
    // The rendered page is what the cache holds for auto.
    const again = await post({ url: fx.url('/shell'), format: 'text' });
    expect(again.body).toMatchObject({ rendered: true, cached: true });
    expect(again.body.content).toContain('written into the page by its own script');
  }, 60_000);

  it('always renders a static article too (its script is fetched by the browser)', async () => {
    const r = await post({ url: fx.url('/article'), format: 'text', render: 'always' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ rendered: true, verdict: 'ok' });
    expect(r.body.content).toContain('Paragraph 5 of the article');
    expect(fx.hits.get('/article.js')).toBe(1);
  }, 60_000);

  it('wait_for waits for content that appears a second after load', async () => {
    const r = await post({ url: fx.url('/slow'), format: 'text', render: 'always', wait_for: 'p.ready' });
    expect(r.status).toBe(200);
    expect(r.body.rendered).toBe(true);
    expect(r.body.content).toContain('ready at last');
  }, 60_000);

  it('screenshot: a PNG of the viewport, counted in bytes', async () => {
    const r = await post({ url: fx.url('/shell'), format: 'text', render: 'always', screenshot: true });
    expect(r.status).toBe(200);
    expect(r.body.screenshot).toMatchObject({ type: 'image/png' });
    expect(r.body.screenshot.width).toBeGreaterThan(0);
    expect(r.body.screenshot.height).toBeGreaterThan(0);
    const png = Buffer.from(r.body.screenshot.data, 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(r.body.bytes).toBe(Buffer.byteLength(r.body.content) + r.body.screenshot.data.length);
    // Without screenshot, none.
    const plain = await post({ url: fx.url('/shell'), format: 'text', render: 'always' });
    expect(plain.body.rendered).toBe(true);
    expect(plain.body.screenshot).toBeUndefined();
    // Over the cap, the screenshot is left out and the answer says it was cut.
    const capped = await post({
      url: fx.url('/shell'),
      format: 'text',
      render: 'always',
      screenshot: true,
      max_bytes: 100,
    });
    expect(capped.body).toMatchObject({ rendered: true, truncated: true });
    expect(capped.body.screenshot).toBeUndefined();
    expect(capped.body.bytes).toBeLessThanOrEqual(100);
  }, 60_000);

  it('full_page: the whole page, down to 16,384 pixels; only with screenshot', async () => {
    /** The height a PNG's header gives. */
    const pngHeight = (data: string) => Buffer.from(data, 'base64').readUInt32BE(20);
    const viewport = await post({ url: fx.url('/tall'), format: 'text', screenshot: true });
    expect(viewport.body.screenshot.height).toBe(800);
    expect(pngHeight(viewport.body.screenshot.data)).toBe(800);
    const tall = await post({ url: fx.url('/tall'), format: 'text', screenshot: true, full_page: true });
    expect(tall.status).toBe(200);
    expect(tall.body.screenshot.height).toBeGreaterThanOrEqual(3000);
    expect(tall.body.screenshot.height).toBeLessThan(3100);
    expect(pngHeight(tall.body.screenshot.data)).toBe(tall.body.screenshot.height);
    expect(tall.body.screenshot.width).toBe(1280);
    const endless = await post({
      url: fx.url('/endless'),
      format: 'text',
      screenshot: true,
      full_page: true,
    });
    expect(endless.status).toBe(200);
    expect(pngHeight(endless.body.screenshot.data)).toBe(16_384);
    const alone = await post({ url: fx.url('/tall'), format: 'text', full_page: true });
    expect(alone.status).toBe(400);
    expect(alone.body.error.message).toContain('full_page is the extent of a screenshot');
  }, 60_000);

  it('screenshot is never dropped: it renders a static page; with render "never" or on a PDF it is 400', async () => {
    // A static article is not rendered by auto, but a screenshot is of a rendered page.
    const shot = await post({ url: fx.url('/article'), format: 'text', screenshot: true });
    expect(shot.status).toBe(200);
    expect(shot.body.rendered).toBe(true);
    expect(shot.body.screenshot).toMatchObject({ type: 'image/png' });
    const never = await post({ url: fx.url('/article'), render: 'never', screenshot: true });
    expect(never.status).toBe(400);
    expect(never.body.error).toMatchObject({ code: 'invalid_request' });
    expect(never.body.error.message).toMatch(/screenshot.*render "never"/);
    // A job is refused as it is submitted, naming the target whose options (its own over the
    // job's) ask both; a crawl, its options.
    const batch = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        options: { screenshot: true },
        targets: [{ url: fx.url('/article') }, { url: fx.url('/article'), options: { render: 'never' } }],
      });
    expect([batch.status, batch.body.error?.message]).toEqual([
      400,
      'targets.1: screenshot is taken of the rendered page: it cannot be asked with render "never"',
    ]);
    const crawl = await http()
      .post('/v1/crawl')
      .set(fleet)
      .send({ url: fx.url('/article'), options: { screenshot: true, render: 'never' } });
    expect([crawl.status, crawl.body.error?.message]).toEqual([
      400,
      'options: screenshot is taken of the rendered page: it cannot be asked with render "never"',
    ]);
    const pdf = await post({ url: fx.url('/doc.pdf'), screenshot: true });
    expect(pdf.status).toBe(400);
    expect(pdf.body.error.message).toMatch(/screenshot is taken of html pages; .*application\/pdf/);
    expect(pdf.body.error.hint).toBeTruthy();
  }, 60_000);

  it.each([
    [{ render: 'sometimes' }, 'render'],
    [{ render: true }, 'render'],
    [{ wait_ms: 10_001 }, 'wait_ms'],
    [{ wait_ms: -1 }, 'wait_ms'],
    [{ wait_for: 'p[' }, 'wait_for'],
    [{ wait_for: '' }, 'wait_for'],
    [{ wait_for: 'p'.repeat(513) }, 'wait_for'],
    [{ screenshot: 'yes' }, 'screenshot'],
  ])('400 invalid_request for %j', async (opts, field) => {
    const r = await post({ url: fx.url('/shell'), ...opts });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_request' });
    expect(r.body.error.message).toContain(field);
    expect(r.body.error.hint).toBeTruthy();
    const b = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/shell'), options: opts }] });
    expect(b.status).toBe(400);
  });

  it('a render of a page reaching for another address: nothing reaches it, the refusals are counted', async () => {
    const r = await post({ url: fx.url('/attack'), format: 'text', render: 'always' });
    expect(r.status).toBe(200);
    expect(r.body.rendered).toBe(true);
    // The fetch() and the iframe (images are not loaded without a screenshot).
    expect(r.body.render.blocked).toBeGreaterThanOrEqual(2);
    expect(secretConnections).toBe(0);
  }, 60_000);

  it('a second render of the same caller past SIFT_FLEET_RENDER_CONCURRENCY is 429', async () => {
    const slow = (q: string) =>
      post({ url: fx.url(`/slow?${q}`), render: 'always', wait_ms: 2000 }).then((r) => r);
    const [a, b] = await Promise.all([slow('a'), slow('b')]);
    expect([a.status, b.status].sort()).toEqual([200, 429]);
    const refused = a.status === 429 ? a : b;
    expect(refused.body.error.code).toBe('too_many_requests');
    expect(refused.headers['retry-after']).toBeDefined();
  }, 60_000);

  it('batch targets render through the same pipeline; one out of time fails timeout', async () => {
    const job = async (target: Record<string, unknown>) => {
      const sub = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: [target], options: { format: 'text' } });
      expect(sub.status).toBe(202);
      await waitForJob(app, sub.body.id);
      return (await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet)).body.results[0];
    };
    // Two at once, past SIFT_FLEET_RENDER_CONCURRENCY 1: the second waits for the first.
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [{ url: fx.url('/shell?b1') }, { url: fx.url('/shell?b2') }],
        options: { format: 'text' },
      });
    expect(await waitForJob(app, sub.body.id)).toMatchObject({ status: 'done', targets_failed: 0 });
    const both = (await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet)).body.results;
    for (const shell of both) {
      expect(shell.status).toBe('done');
      expect(shell.result).toMatchObject({ rendered: true, verdict: 'ok' });
      expect(shell.result.content).toContain('written into the page by its own script');
    }
    const late = await job({
      url: fx.url('/slow?batch'),
      options: { render: 'always', wait_for: '.never', timeout_ms: 1500 },
    });
    expect(late.status).toBe('failed');
    expect(late.error).toMatchObject({ code: 'timeout' });
  }, 90_000);
});

describe('rendering without Chromium', () => {
  let app: INestApplication;
  let fx: Fixture;
  const post = (body: Record<string, unknown>) =>
    request(app.getHttpServer()).post('/v1/fetch').set(fleet).send(body);
  const warnings: string[] = [];
  const logger: LoggerService = {
    log: () => undefined,
    error: () => undefined,
    warn: (m: unknown) => void warnings.push(String(m)),
  };

  beforeAll(async () => {
    fx = await new Fixture({ '/shell': send(200, 'text/html', SHELL) }).start();
    ({ app } = await createTestApp(
      {
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_CHROMIUM_PATH: '/nonexistent/chromium',
        SIFT_RESTRICTED_RENDER_CONCURRENCY: '1',
      },
      { logger },
    ));
  });

  afterAll(async () => {
    await app?.close();
    await fx?.stop();
  });

  it('/healthz says render false', async () => {
    const r = await request(app.getHttpServer()).get('/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, render: false });
  });

  it('always: 503 render_unavailable naming the package and SIFT_CHROMIUM_PATH, with Retry-After', async () => {
    const r = await post({ url: fx.url('/shell'), render: 'always' });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('render_unavailable');
    expect(r.body.error.message).toContain('/nonexistent/chromium');
    expect(r.body.error.hint).toContain('chromium');
    expect(r.body.error.hint).toContain('SIFT_CHROMIUM_PATH');
    expect(r.headers['retry-after']).toBeDefined();
  });

  it('auto: the static result, rendered false, and the hint in the log once', async () => {
    for (const q of ['a', 'b']) {
      const r = await post({ url: fx.url(`/shell?${q}`), format: 'text' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ rendered: false, verdict: 'challenge' });
      expect(r.body.render).toBeUndefined();
    }
    const hints = warnings.filter((w) => w.includes('SIFT_CHROMIUM_PATH'));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain('/nonexistent/chromium');
  });
});
