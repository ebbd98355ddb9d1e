import { CONTEXT_CLOSE_MS } from '../../src/render/browser-host';
import type { Renderer } from '../../src/render/renderer';
import { Fixture, html, redirect, send, type Handler } from '../support/fixture';
import { failure, renderOf, testRenderer } from '../support/render';
import { waitUntil } from '../support/wait';

/** Answers `body` as html after `ms`. */
const later =
  (ms: number, body: string): Handler =>
  (req, res) =>
    setTimeout(() => send(200, 'text/html', body)(req, res), ms);

const page = (body: string, script = '') => html(`${body}<script>${script}</script>`, 'Render fixture');

/** Pages that need a browser: each says in a comment what only a browser shows of it. */
const ROUTES: Record<string, Handler> = {
  // Content inserted once the page has loaded.
  '/after-load': send(
    200,
    'text/html',
    page(
      '<main id="app"></main>',
      `addEventListener('load', () => { document.getElementById('app').innerHTML = '<p id="late">inserted after load</p>'; });`,
    ),
  ),
  // Content fetched by XHR from the same site.
  '/xhr': send(
    200,
    'text/html',
    page(
      '<main id="app">loading</main>',
      `const x = new XMLHttpRequest(); x.open('GET', '/data.json');
       x.onload = () => { document.getElementById('app').textContent = JSON.parse(x.responseText).text; }; x.send();`,
    ),
  ),
  '/data.json': (_req, res) =>
    setTimeout(
      () => send(200, 'application/json', JSON.stringify({ text: 'text from the XHR' }))(_req, res),
      200,
    ),
  // Content in two parts: the second asked for 150 ms after the first came, and answered 800 ms
  // later; the page is read once neither is in flight.
  '/chained': send(
    200,
    'text/html',
    page(
      '<main id="app"></main>',
      `const add = (r) => r.text().then((t) => app.insertAdjacentHTML('beforeend', t));
       fetch('/part/1').then(add).then(() => setTimeout(() => fetch('/part/2').then(add), 150));`,
    ),
  ),
  '/part/1': later(100, '<p>the first part</p>'),
  '/part/2': later(800, '<p>the second part</p>'),
  // An XHR answered by a redirect to the data.
  '/moved-xhr': send(
    200,
    'text/html',
    page(
      '<main id="app"></main>',
      `fetch('/moved').then((r) => r.json()).then((d) => (app.textContent = d.text));`,
    ),
  ),
  '/moved': redirect('/data.json'),
  // Content that appears after a second.
  '/slow-content': send(
    200,
    'text/html',
    page(
      '<main id="app"></main>',
      `setTimeout(() => { document.getElementById('app').innerHTML = '<p class="ready">ready at last</p>'; }, 1000);`,
    ),
  ),
  // A redirect in script.
  '/script-redirect': send(200, 'text/html', page('<p>leaving</p>', `location.replace('/landed');`)),
  '/landed': send(200, 'text/html', page('<p>landed here</p>')),
  // The document handed in: the browser must not fetch it.
  '/handed': send(200, 'text/html', page('<p>served by the fixture</p>')),
  // A page that never stops loading: its image never answers.
  '/never-loads': send(200, 'text/html', page('<p>almost</p><script src="/hang.js"></script>')),
  '/hang.js': () => undefined,
  // A page that loops in script for ever.
  '/loops': send(200, 'text/html', page('<p>spinning</p>', 'setTimeout(() => { for (;;) {} }, 50);')),
  '/plain': send(200, 'text/html', page('<p>a plain page</p>')),
  // A page that will not have its markup read in its own world: the getter throws.
  '/masked': send(
    200,
    'text/html',
    page(
      '<p>read all the same</p>',
      `Object.defineProperty(Element.prototype, 'outerHTML', { get() { throw new Error('no'); } });`,
    ),
  ),
  // A page that writes 2 MB of text into itself.
  '/grows': send(
    200,
    'text/html',
    page('<p id="big"></p>', `big.textContent = 'x'.repeat(2 * 1024 * 1024);`),
  ),
};

describe('Renderer: pages in Chromium', () => {
  let fx: Fixture;
  let r: Renderer;

  beforeAll(async () => {
    fx = await new Fixture(ROUTES).start();
    r = testRenderer();
  });

  afterAll(async () => {
    await r?.close();
    await fx?.stop();
  });

  it('gives the DOM after the load handler has changed it', async () => {
    const out = await r.render(renderOf(fx.url('/after-load')));
    expect(out.html).toContain('<p id="late">inserted after load</p>');
    expect(out.status).toBe(200);
    expect(out.finalUrl).toBe(fx.url('/after-load'));
    expect(out.requests).toBeGreaterThanOrEqual(1);
    expect(out.blocked).toBe(0);
  }, 60_000);

  it('waits for an XHR of the same site to be answered and shown', async () => {
    const out = await r.render(renderOf(fx.url('/xhr')));
    expect(out.html).toContain('text from the XHR');
    expect(fx.hitCount('/data.json')).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it('reads the page once no request is in flight: a part asked for after a pause, a slow one, a redirected one', async () => {
    const out = await r.render(renderOf(fx.url('/chained')));
    expect(out.html).toContain('<p>the first part</p><p>the second part</p>');
    const moved = await r.render(renderOf(fx.url('/moved-xhr')));
    expect(moved.html).toContain('text from the XHR');
  }, 30_000);

  it('finds content that comes after 1 s with wait_for', async () => {
    const started = Date.now();
    const out = await r.render(renderOf(fx.url('/slow-content'), { waitFor: 'p.ready' }));
    expect(out.html).toContain('ready at last');
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it('follows a redirect made in script', async () => {
    const out = await r.render(renderOf(fx.url('/script-redirect')));
    expect(out.finalUrl).toBe(fx.url('/landed'));
    expect(out.html).toContain('landed here');
  }, 30_000);

  it("reads the DOM the driver's way when the page's own markup getters fail", async () => {
    const out = await r.render(renderOf(fx.url('/masked')));
    expect(out.html).toContain('<p>read all the same</p>');
  }, 30_000);

  it('refuses a rendered DOM over the download cap as too_large', async () => {
    const err = await failure(r.render(renderOf(fx.url('/grows'), { maxBytes: 1024 * 1024 })));
    expect(err).toMatchObject({ code: 'too_large' });
    // Under the cap, the same page is given whole.
    const out = await r.render(renderOf(fx.url('/grows'), { maxBytes: 4 * 1024 * 1024 }));
    expect(out.html.length).toBeGreaterThan(2 * 1024 * 1024);
  }, 30_000);

  it('renders the document handed in without fetching it again', async () => {
    const before = fx.hitCount('/handed');
    const out = await r.render(
      renderOf(fx.url('/handed'), {
        html: page('<p>handed in</p>', `document.body.insertAdjacentHTML('beforeend', '<p>script ran</p>')`),
        status: 200,
        contentType: 'text/html; charset=iso-8859-1',
      }),
    );
    expect(out.html).toContain('handed in');
    expect(out.html).toContain('script ran');
    expect(out.html).not.toContain('served by the fixture');
    expect(fx.hitCount('/handed') - before).toBe(0);
  }, 30_000);

  it.each([
    ['never stops loading', '/never-loads'],
    ['loops in script', '/loops'],
  ])(
    'a page that %s ends in timeout at timeout_ms',
    async (_what, path) => {
      const started = Date.now();
      const err = await failure(r.render(renderOf(fx.url(path), { timeoutMs: 3000, waitMs: 500 })));
      const took = Date.now() - started;
      expect(err).toMatchObject({ code: 'timeout', status: 504 });
      expect(took).toBeGreaterThanOrEqual(2900);
      expect(took).toBeLessThan(4500);
      // And the pool is whole again: the next render works.
      const next = await r.render(renderOf(fx.url('/plain')));
      expect(next.html).toContain('a plain page');
    },
    60_000,
  );

  it('leaves no context open after 20 renders in a row', async () => {
    for (let i = 0; i < 20; i++) {
      const out = await r.render(renderOf(fx.url('/plain')));
      expect(out.html).toContain('a plain page');
    }
    // Each context closes behind its answer, within CONTEXT_CLOSE_MS or its browser is killed.
    await waitUntil(
      () => r.busy === 0 || undefined,
      () => `${r.busy} renders still hold a page`,
      CONTEXT_CLOSE_MS + 1000,
    );
    expect(r.openContexts()).toBe(0);
  }, 120_000);

  it('takes a PNG of the viewport when asked', async () => {
    const out = await r.render(renderOf(fx.url('/after-load'), { screenshot: true }));
    expect(out.screenshot).toMatchObject({ type: 'image/png', width: 1280, height: 800 });
    const png = Buffer.from(out.screenshot!.data, 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // IHDR: width and height, big-endian, at 16 and 20.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
  }, 30_000);

  it('answers 429 too_many_requests past the per-caller cap, and serves the caller again after', async () => {
    // The restricted class reaches only public addresses: these pages are handed in, not fetched.
    const slow = page(
      '<main id="app"></main>',
      `setTimeout(() => { app.innerHTML = '<p class="ready">ready</p>'; }, 1000);`,
    );
    const as = (who: string, o = {}) =>
      renderOf(fx.url('/handed'), {
        callerClass: 'restricted',
        who,
        html: page('<p>handed plain</p>'),
        ...o,
      });
    const first = r.render(as('restricted:r', { html: slow, waitFor: 'p.ready' }));
    expect(await failure(r.render(as('restricted:r')))).toMatchObject({
      code: 'too_many_requests',
      status: 429,
    });
    // Another caller is not held by it.
    expect((await r.render(as('restricted:other'))).html).toContain('handed plain');
    expect((await first).html).toContain('ready');
    expect((await r.render(as('restricted:r'))).html).toContain('handed plain');
    // Its own fixture on 127.0.0.1 is refused to it.
    expect(
      await failure(r.render(renderOf(fx.url('/plain'), { callerClass: 'restricted', who: 'restricted:r' }))),
    ).toMatchObject({
      code: 'blocked_address',
    });
  }, 60_000);
});

describe('Renderer: SIFT_RENDER_PAGES', () => {
  it('renders at most that many pages at once; one that waits past its deadline ends in timeout', async () => {
    const r = testRenderer({ pages: 1 });
    try {
      const slow = page(
        '<main id="app"></main>',
        `setTimeout(() => { app.innerHTML = '<p class="ready">ready</p>'; }, 1500);`,
      );
      const url = 'http://127.0.0.1:9/handed';
      // The browser is up before the race starts.
      await r.render(renderOf(url, { html: page('<p>warm</p>') }));
      const first = r.render(renderOf(url, { html: slow, waitFor: 'p.ready', who: 'fleet:a' }));
      const waited = await failure(
        r.render(renderOf(url, { html: page('<p>b</p>'), who: 'fleet:b', timeoutMs: 800 })),
      );
      expect(waited).toMatchObject({ code: 'timeout', status: 504 });
      expect(r.busy).toBe(1);
      expect((await first).html).toContain('ready');
      expect((await r.render(renderOf(url, { html: page('<p>c</p>'), who: 'fleet:b' }))).html).toContain(
        '<p>c</p>',
      );
    } finally {
      await r.close();
    }
  }, 60_000);
});

describe('Renderer without Chromium', () => {
  it('is not available, and a render fails render_unavailable naming the package and SIFT_CHROMIUM_PATH', async () => {
    const r = testRenderer({ chromiumPath: '/nonexistent/chromium' });
    expect(r.available).toBe(false);
    const err = (await r.render(renderOf('http://127.0.0.1:9/')).catch((e: unknown) => e)) as {
      code: string;
      status: number;
      hint: string;
    };
    expect(err).toMatchObject({ code: 'render_unavailable', status: 503 });
    expect(err.hint).toMatch(/chromium/);
    expect(err.hint).toMatch(/SIFT_CHROMIUM_PATH/);
    await r.close();
  });

  it('is not available once a Chromium that will not start has been tried', async () => {
    const r = testRenderer({ chromiumPath: '/bin/false' });
    expect(r.available).toBe(true);
    const err = await failure(r.render(renderOf('http://127.0.0.1:9/')));
    expect(err).toMatchObject({ code: 'render_unavailable', status: 503 });
    expect(r.available).toBe(false);
    await r.close();
  }, 60_000);
});
