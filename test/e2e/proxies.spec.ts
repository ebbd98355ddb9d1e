import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { loadConfig } from '../../src/config/app-config';
import { createTestApp, fleet, restricted, tableResolver, waitForJob, waitUntil } from '../support/app';
import { startMicrosocks, startTinyproxy, type ProxyProcess } from '../support/egress-proxies';
import { Fixture, html, send, type Handler } from '../support/fixture';

/** An article that says which Host it was asked for. */
const hostEcho: Handler = (req, res) =>
  send(
    200,
    'text/html',
    html(
      `<article><h1>Echo</h1><p>asked for host [${req.headers.host}]. ${'Words enough to be read as an article. '.repeat(8)}</p></article>`,
      'Echo',
    ),
  )(req, res);

/** Waits for a proxy's log (another process's, written a moment after it acts) to show `what`. */
const logged = (p: ProxyProcess, what: (log: string) => boolean) =>
  waitUntil(
    () => what(p.log()) || undefined,
    () => `the proxy's log to show it: ${p.log().slice(-2000)}`,
    5000,
  );

describe('egress proxies: named by the operator, the address policy held through them', () => {
  let app: INestApplication;
  let site: Fixture;
  let secret: Fixture;
  let tiny: ProxyProcess;
  let socks: ProxyProcess;
  const http = () => request(app.getHttpServer());
  const fetchIt = (body: object, who = fleet) =>
    http()
      .post('/v1/fetch')
      .set(who)
      .send({ format: 'text', max_age_s: 0, ...body });
  const named = (path: string) => `http://site.test:${site.port}${path}`;

  beforeAll(async () => {
    secret = await new Fixture({ '/secret': send(200, 'text/plain', 'the secret') }).start('127.0.0.5');
    site = await new Fixture({
      '/echo': hostEcho,
      '/api.json': send(200, 'application/json', '{"loaded": "by script"}'),
      '/scripted': send(
        200,
        'text/html',
        html(
          `<article id="a"><h1>Scripted</h1><p>${'Words enough to be read as an article. '.repeat(8)}</p></article>` +
            `<script>fetch('/api.json').then(r => r.json()).then(j => document.getElementById('a').insertAdjacentHTML('beforeend', '<p>script says ' + j.loaded + '</p>'))</script>`,
          'Scripted',
        ),
      ),
    }).start('127.0.0.2');
    tiny = await startTinyproxy('127.0.0.6');
    socks = await startMicrosocks('127.0.0.7');
    ({ app } = await createTestApp(
      {
        // The site's address may be reached by fleet callers; the secret's may not.
        SIFT_FLEET_ALLOW: '127.0.0.2/32',
        SIFT_PROXIES: `office=${tiny.url},us=${socks.url},dead=http://127.0.0.8:9`,
      },
      { resolver: tableResolver({ 'site.test': ['127.0.0.2'], 'secret.test': ['127.0.0.5'] }) },
    ));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await tiny?.stop();
    await socks?.stop();
    await site?.stop();
    await secret?.stop();
  });

  it('a static fetch through HTTP CONNECT and through SOCKS5: the proxy is asked for the checked address', async () => {
    for (const [name, proxy] of [
      ['office', tiny],
      ['us', socks],
    ] as const) {
      const r = await fetchIt({ url: named('/echo'), proxy: name });
      expect([r.status, r.body.error]).toEqual([200, undefined]);
      // The site is asked for its name; the proxy was asked for the address sift checked.
      expect(r.body.content).toContain(`asked for host [site.test:${site.port}]`);
      await logged(proxy, (log) => log.includes(`127.0.0.2:${site.port}`));
      expect(proxy.log()).not.toContain('site.test');
    }
  }, 60_000);

  it('https goes through the tunnel: TLS with the site, inside it, by name', async () => {
    // The fixture speaks plain HTTP: a TLS handshake with it fails, and it failed inside the tunnel.
    for (const [name, proxy] of [
      ['office', tiny],
      ['us', socks],
    ] as const) {
      const before = proxy.log().length;
      // robots: false, so that the page itself is asked (a robots.txt that failed is kept a while).
      const r = await fetchIt({ url: `https://site.test:${site.port}/echo`, proxy: name, robots: false });
      expect([r.status, r.body.error?.code]).toEqual([502, 'tls_error']);
      // The proxy's log is another process's: read until its line is there.
      await logged(proxy, (log) => log.slice(before).includes(`127.0.0.2:${site.port}`));
    }
  }, 60_000);

  it("a rendered page's own requests go through the proxy too", async () => {
    const before = (tiny.log().match(/127\.0\.0\.2/g) ?? []).length;
    const r = await fetchIt({ url: named('/scripted'), proxy: 'office', render: 'always' });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.content).toContain('script says by script');
    expect(r.body.render.requests).toBeGreaterThanOrEqual(1);
    // The page (static) and its script's request (rendered) both went through.
    await logged(tiny, (log) => (log.match(/127\.0\.0\.2/g) ?? []).length >= before + 2);
  }, 60_000);

  it('a name resolving to a forbidden address is still blocked, the proxy in use', async () => {
    for (const proxy of ['office', 'us']) {
      const r = await fetchIt({ url: `http://secret.test:${secret.port}/secret`, proxy });
      expect([r.status, r.body.error?.code]).toEqual([403, 'blocked_address']);
    }
    expect(secret.hitCount('/secret')).toBe(0);
    expect(tiny.log()).not.toContain('127.0.0.5');
    expect(socks.log()).not.toContain('127.0.0.5');
  }, 60_000);

  it('a proxy that fails is proxy_error naming it, never a direct connection', async () => {
    const hits = site.hitCount('/echo');
    const dead = await fetchIt({ url: named('/echo'), proxy: 'dead' });
    expect([dead.status, dead.body.error.code]).toEqual([502, 'proxy_error']);
    expect(dead.body.error.message).toContain('"dead"');
    const rendered = await fetchIt({ url: named('/scripted'), proxy: 'dead', render: 'always' });
    expect([rendered.status, rendered.body.error.code]).toEqual([502, 'proxy_error']);
    expect(site.hitCount('/echo')).toBe(hits);
  }, 60_000);

  it('an unknown name is 400, a restricted caller 403; the proxy is part of the cache key', async () => {
    const unknown = await fetchIt({ url: named('/echo'), proxy: 'elsewhere' });
    expect([unknown.status, unknown.body.error.hint]).toEqual([
      400,
      expect.stringContaining('office, us, dead'),
    ]);
    const refused = await fetchIt({ url: 'http://93.184.215.14/', proxy: 'office' }, restricted);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    expect(refused.body.error.hint).toContain('SIFT_RESTRICTED_PROXIES');
    const bad = await fetchIt({ url: named('/echo'), proxy: 'no such' });
    expect(bad.status).toBe(400);
    const url = named('/echo?keyed');
    const direct = await fetchIt({ url, max_age_s: 3600 });
    const viaProxy = await fetchIt({ url, proxy: 'office', max_age_s: 3600 });
    const again = await fetchIt({ url, proxy: 'office', max_age_s: 3600 });
    const directAgain = await fetchIt({ url, max_age_s: 3600 });
    expect([direct, viaProxy, again, directAgain].map((r) => r.body.cached)).toEqual([
      false,
      false,
      true,
      true,
    ]);
  }, 60_000);

  it('a batch keeps the proxy with its job; a bad one is refused when submitted', async () => {
    const before = (socks.log().match(/127\.0\.0\.2/g) ?? []).length;
    const job = await http()
      .post('/v1/batch')
      .set(fleet)
      // Another origin than the pages before (the IP): a connection of its own, logged by the proxy.
      .send({
        targets: [{ url: site.url('/echo') }],
        options: { format: 'text', max_age_s: 0, proxy: 'us' },
      });
    expect(job.status).toBe(202);
    await waitForJob(app, job.body.id);
    const res = await http().get(`/v1/batch/${job.body.id}/results`).set(fleet);
    expect(res.body.results[0].result.content).toContain('asked for host');
    // robots.txt and the page, each through the proxy.
    await logged(socks, (log) => (log.match(/127\.0\.0\.2/g) ?? []).length > before);
    const bad = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: named('/echo'), options: { proxy: 'elsewhere' } }] });
    expect([bad.status, bad.body.error.message]).toEqual([400, expect.stringContaining('targets.0: proxy')]);
  }, 60_000);

  it("Firecrawl's proxy and location.country name the operator's proxies, else 400 naming the field", async () => {
    const scrape = (body: object) =>
      http()
        .post('/v2/scrape')
        .set(fleet)
        .send({ url: named('/echo'), maxAge: 0, ...body });
    const us = await scrape({ location: { country: 'US' } });
    expect([us.status, us.body.data?.markdown]).toEqual([200, expect.stringContaining('asked for host')]);
    const office = await scrape({ proxy: 'office' });
    expect(office.status).toBe(200);
    const basic = await scrape({ proxy: 'basic' });
    expect(basic.status).toBe(200);
    for (const [body, field] of [
      [{ location: { country: 'FR' } }, 'location.country'],
      [{ location: { languages: ['fr'] } }, 'location.languages'],
      [{ proxy: 'stealth' }, 'proxy'],
    ] as const) {
      const r = await scrape(body);
      expect([r.status, r.body.success]).toEqual([400, false]);
      expect(r.body.error).toContain(field);
    }
  }, 60_000);

  it('stopping the proxy makes it proxy_error, not a way around it', async () => {
    await socks.stop();
    const r = await fetchIt({ url: named('/echo'), proxy: 'us' });
    expect([r.status, r.body.error.code]).toEqual([502, 'proxy_error']);
    expect(r.body.error.message).toContain('"us"');
  }, 60_000);
});

describe('egress proxies: the configuration', () => {
  it('each class uses only the names its list gives', async () => {
    const { app } = await createTestApp({
      SIFT_PROXIES: 'office=http://127.0.0.6:9,us=socks5://127.0.0.7:9',
      SIFT_FLEET_PROXIES: 'us',
      SIFT_RESTRICTED_PROXIES: 'office',
    });
    try {
      const ask = (who: Record<string, string>, proxy: string) =>
        request(app.getHttpServer()).post('/v1/fetch').set(who).send({ url: 'http://127.0.0.2:9/', proxy });
      const fleetOffice = await ask(fleet, 'office');
      expect([fleetOffice.status, fleetOffice.body.error.code]).toEqual([403, 'forbidden']);
      expect(fleetOffice.body.error.hint).toContain('SIFT_FLEET_PROXIES');
      // Past the proxy's check, the address's: a restricted caller never reaches loopback.
      const restrictedOffice = await ask(restricted, 'office');
      expect([restrictedOffice.status, restrictedOffice.body.error.code]).toEqual([403, 'blocked_address']);
      const restrictedUs = await ask(restricted, 'us');
      expect([restrictedUs.status, restrictedUs.body.error.code]).toEqual([403, 'forbidden']);
    } finally {
      await app.close();
    }
  });

  it('names are checked: a bad list, a class naming a proxy that does not exist', () => {
    const base = { SIFT_DB: ':memory:' };
    expect(() => loadConfig({ ...base, SIFT_PROXIES: 'a=ftp://x:1' })).toThrow(
      /http:\/\/host:port or socks5/,
    );
    expect(() => loadConfig({ ...base, SIFT_PROXIES: 'a=http://x' })).toThrow(/SIFT_PROXIES/);
    expect(() => loadConfig({ ...base, SIFT_PROXIES: 'a=http://x:1,a=http://y:2' })).toThrow(/named twice/);
    expect(() => loadConfig({ ...base, SIFT_PROXIES: 'a=http://x:1', SIFT_RESTRICTED_PROXIES: 'b' })).toThrow(
      /SIFT_RESTRICTED_PROXIES names "b"/,
    );
    const ok = loadConfig({ ...base, SIFT_PROXIES: 'a=http://u:p%40@x:1,b=socks5://[::1]:1080' });
    expect([...ok.proxies.values()]).toEqual([
      { name: 'a', kind: 'http', host: 'x', port: 1, user: 'u', pass: 'p@' },
      { name: 'b', kind: 'socks5', host: '::1', port: 1080 },
    ]);
    expect([ok.limits.fleet.proxies, ok.limits.restricted.proxies]).toEqual(['*', []]);
  });
});
