import * as net from 'node:net';
import type { LookupAddress } from 'node:dns';
import type { Renderer } from '../../src/render/renderer';
import { Fixture, html, send } from '../support/fixture';
import { failure, renderOf, testRenderer } from '../support/render';

/**
 * SSRF from inside a rendered page: the page on 127.0.0.2, a fleet caller allowed
 * 127.0.0.2/32 only, a "secret" server on 127.0.0.3 on the same port. Whatever the page does
 * (img, fetch, iframe, a script redirect, WebSocket) to 127.0.0.3, to 169.254.169.254 or to a name
 * that resolves to 127.0.0.2 when first checked and to 127.0.0.3 after, nothing reaches the
 * secret server, and what was refused is counted.
 */
describe('every request of a rendered page is held to the caller address policy', () => {
  let fx: Fixture;
  let secret: net.Server;
  let secretConnections = 0;
  let r: Renderer;
  let port: number;
  let rebindLookups = 0;

  /** The page's attempts on each target, in every way a page can reach out. */
  const attacks = (targets: string[]) =>
    targets
      .map(
        (t) =>
          `<img src="${t}/img"><iframe src="${t}/frame"></iframe>` +
          `<script>fetch('${t}/fetch').catch(() => {}); try { new WebSocket('${t.replace('http', 'ws')}/ws'); } catch (e) {}</script>`,
      )
      .join('\n');

  /** A page that sends itself elsewhere in script. */
  const leaveFor = (url: string) =>
    send(200, 'text/html', html(`<script>location.href = '${url}';</script>`));

  beforeAll(async () => {
    fx = new Fixture({
      '/attack': (req, res) =>
        send(200, 'text/html', html(`<p id="own">waiting</p>${attacks(targets())}${ownFetch}`))(req, res),
      '/own': send(200, 'text/plain', 'own site reached'),
      // Built when asked: the port is known only once the fixture listens.
      '/redirect-ip': (req, res) => leaveFor(`http://127.0.0.3:${port}/landed`)(req, res),
      '/redirect-meta': leaveFor('http://169.254.169.254/latest/meta-data/'),
      '/redirect-name': (req, res) => leaveFor(`http://rebind.test:${port}/landed`)(req, res),
      '/*': send(200, 'text/plain', 'the page server'),
    });
    await fx.start('127.0.0.2');
    port = fx.port;
    secret = net.createServer((s) => {
      secretConnections++;
      s.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecret');
    });
    // The same port on 127.0.0.3: a name rebound from one to the other reaches the secret as it is.
    await new Promise<void>((resolve) => secret.listen(port, '127.0.0.3', resolve));
    const resolver = async (host: string): Promise<LookupAddress[]> => {
      if (host === 'rebind.test')
        return [{ address: rebindLookups++ === 0 ? '127.0.0.2' : '127.0.0.3', family: 4 }];
      if (host === 'secret.test') return [{ address: '127.0.0.3', family: 4 }];
      if (host === 'public.test') return [{ address: '93.184.215.14', family: 4 }];
      throw Object.assign(new Error(`no such name ${host}`), { code: 'ENOTFOUND' });
    };
    r = testRenderer({ allow: '127.0.0.2/32', resolver });
  });

  afterAll(async () => {
    await r?.close();
    await fx?.stop();
    await new Promise((resolve) => secret?.close(resolve));
  });

  const targets = () => [
    `http://127.0.0.3:${port}`,
    'http://169.254.169.254',
    `http://rebind.test:${port}`,
    `http://secret.test:${port}`,
  ];
  const ownFetch = `<script>fetch('/own').then((a) => a.text()).then((t) => { own.textContent = t; });</script>`;

  beforeEach(() => {
    secretConnections = 0;
    rebindLookups = 0;
  });

  it('img, fetch, iframe and WebSocket to the secret, the metadata address and a rebinding name: all refused', async () => {
    // A screenshot, so that images are loaded too.
    const out = await r.render(renderOf(fx.url('/attack'), { screenshot: true, waitMs: 1000 }));
    expect(out.html).toContain('own site reached');
    expect(secretConnections).toBe(0);
    // Each of the 3 forbidden targets refused (Chromium may give up on a host after its first refusal).
    expect(out.blocked).toBeGreaterThanOrEqual(3);
    expect(out.requests).toBeGreaterThan(out.blocked);
  }, 60_000);

  it.each(['/redirect-ip', '/redirect-meta', '/redirect-name'])(
    'a redirect in script (%s) reaches nothing it may not',
    async (path) => {
      // The name's first lookup (127.0.0.2) is taken by the check before: its next is 127.0.0.3.
      rebindLookups = 1;
      const out = await failure(r.render(renderOf(fx.url(path), { waitMs: 2000 })));
      expect(secretConnections).toBe(0);
      // Refused as a static fetch's redirect would be, naming where it led.
      expect(out).toMatchObject({ code: 'blocked_address', status: 403 });
      expect(out.message).toMatch(/127\.0\.0\.3|169\.254\.169\.254|rebind\.test/);
    },
    60_000,
  );

  it('a restricted caller reaches no private address, by IP or by a name the test resolver gives', async () => {
    const before = new Map(fx.hits);
    const out = await r.render(
      renderOf('http://public.test/', {
        callerClass: 'restricted',
        who: 'restricted:r',
        html: html(`<p>public page</p>${attacks([...targets(), `http://127.0.0.2:${port}`])}`),
        screenshot: true,
        waitMs: 1000,
      }),
    );
    expect(out.html).toContain('public page');
    expect(secretConnections).toBe(0);
    // Nor the page's own server on 127.0.0.2, which only fleet callers may reach.
    expect([...fx.hits].filter(([p, n]) => n !== before.get(p))).toEqual([]);
    expect(out.blocked).toBeGreaterThanOrEqual(5);
  }, 60_000);
});
