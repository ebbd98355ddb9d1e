import * as http from 'node:http';
import * as zlib from 'node:zlib';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { ClientStore } from '../../src/dcache';
import { fingerprint } from '../../src/api/auth.guard';
import { FetchController } from '../../src/api/fetch.controller';
import { createTestApp, tableResolver, TestClock, waitUntil, fleet, restricted } from '../support/app';
import { articleHtml, Fixture, gzipped, html, redirect, send } from '../support/fixture';

describe('POST /v1/fetch', () => {
  let app: INestApplication;
  let fx: Fixture;
  const held: http.IncomingMessage[] = [];
  const clock = new TestClock();
  const post = (body: object, headers: Record<string, string> = fleet) =>
    request(app.getHttpServer()).post('/v1/fetch').set(headers).send(body);

  beforeAll(async () => {
    let slowTimer: NodeJS.Timeout | undefined;
    fx = await new Fixture({
      '/article': send(200, 'text/html; charset=utf-8', articleHtml('The Article Title', 8, 'otters')),
      '/plain': send(200, 'text/plain', 'just some plain text\nsecond line'),
      '/json': send(200, 'application/json', '{"a":1,"b":[true,null]}'),
      '/gif': send(200, 'image/gif', Buffer.from('GIF89a', 'latin1')),
      '/multibyte': send(200, 'text/plain; charset=utf-8', 'ab€😀cd'),
      '/latin1': send(
        200,
        'text/html',
        Buffer.from(
          html(
            '<article><p>Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade.</p></article>',
            'Menu',
            '<meta charset="windows-1252">',
          ).replace('<meta charset="utf-8">', ''),
          'latin1',
        ),
      ),
      '/gzip': gzipped('text/html', articleHtml('Zipped Page', 6, 'gzip')),
      '/gzip-bomb': gzipped('text/plain', Buffer.alloc(11 * 1024 * 1024, 0x61)),
      '/big': send(200, 'text/plain', Buffer.alloc(11 * 1024 * 1024, 0x61)),
      '/missing': send(404, 'text/html', html('<p>There is no page here at all.</p>', 'Not Found')),
      '/counted': (req, res) =>
        setTimeout(() => send(200, 'text/plain', `slow body ${Date.now()}`)(req, res), 150),
      '/slow': (_req, res) => {
        slowTimer = setTimeout(() => res.end('too late'), 5000);
      },
      '/held': (req) => {
        held.push(req);
      },
      '/r1': redirect('/r2'),
      '/r2': redirect('/plain', 301),
      '/loop': redirect('/loop'),
      '/chain6': redirect('/c5'),
      '/c5': redirect('/c4'),
      '/c4': redirect('/c3'),
      '/c3': redirect('/c2'),
      '/c2': redirect('/c1'),
      '/c1': redirect('/c0'),
      '/c0': send(200, 'text/plain', 'end of chain'),
      '/to-private': redirect('http://10.1.2.3/secret'),
      '/to-ftp': redirect('ftp://127.0.0.1/file'),
      '/echo-headers': (req, res) => send(200, 'application/json', JSON.stringify(req.headers))(req, res),
    }).start();
    ({ app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_RESTRICTED_OUTPUT_CAP: '1000' },
      {
        clock,
        resolver: tableResolver({
          'fixture.test': ['127.0.0.1'],
          'public.test': ['93.184.216.34', '127.0.0.1'],
        }),
      },
    ));
    void slowTimer;
  });

  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  describe('auth', () => {
    it('401 without a token, with the envelope', async () => {
      const r = await post({ url: fx.url('/plain') }, {});
      expect(r.status).toBe(401);
      expect(r.body.error).toMatchObject({ code: 'unauthorized' });
      expect(r.body.error.hint).toBeTruthy();
      expect(r.headers['www-authenticate']).toBe('Bearer');
    });

    it('401 with an unknown token', async () => {
      const r = await post({ url: fx.url('/plain') }, { Authorization: 'Bearer not-a-known-token' });
      expect(r.status).toBe(401);
    });

    it('accepts a token whose fingerprint is in the clients table', async () => {
      await app.get(ClientStore).addClient({
        fingerprint: fingerprint('table-token-xyz'),
        caller: 'tabled',
        callerClass: 'fleet',
        createdAt: 1,
      });
      const r = await post({ url: fx.url('/plain') }, { Authorization: 'Bearer table-token-xyz' });
      expect(r.status).toBe(200);
    });
  });

  describe('formats and content types', () => {
    it('extracts an html article as markdown by default, with the full envelope', async () => {
      const r = await post({ url: fx.url('/article') });
      expect(r.status).toBe(200);
      const e = r.body;
      expect(Object.keys(e).sort()).toEqual(
        [
          'bytes',
          'cached',
          'content',
          'content_type',
          'digest',
          'fetched_at',
          'final_url',
          'format',
          'metadata',
          'rendered',
          'revalidated',
          'status',
          'title',
          'truncated',
          'url',
          'verdict',
        ].sort(),
      );
      expect(e).toMatchObject({
        url: fx.url('/article'),
        final_url: fx.url('/article'),
        status: 200,
        format: 'markdown',
        revalidated: false,
        verdict: 'ok',
        title: 'The Article Title',
        truncated: false,
        cached: false,
      });
      expect(e.content).toContain('Paragraph 3 of the article about otters');
      expect(e.content).not.toContain('Copyright footer');
      expect(e.bytes).toBe(Buffer.byteLength(e.content));
      expect(e.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(new Date(e.fetched_at).toISOString()).toBe(e.fetched_at);
    });

    it('text keeps paragraphs apart and html returns the cleaned main content', async () => {
      const t = await post({ url: fx.url('/article'), format: 'text' });
      expect(t.body.content).toMatch(/scores\.\n\nParagraph 1/);
      expect(t.body.content).not.toContain('<p>');
      const h = await post({ url: fx.url('/article'), format: 'html' });
      expect(h.body.content).toContain('<p>');
      expect(h.body.content).not.toContain('<nav>');
    });

    it('passes text/plain and json through', async () => {
      expect((await post({ url: fx.url('/plain') })).body.content).toBe('just some plain text\nsecond line');
      expect((await post({ url: fx.url('/json'), format: 'text' })).body.content).toBe(
        '{"a":1,"b":[true,null]}',
      );
      // In markdown, a JSON page is a fenced block of the JSON as served (see formats.spec.ts).
      expect((await post({ url: fx.url('/json') })).body.content).toBe(
        '```json\n{"a":1,"b":[true,null]}\n```',
      );
    });

    it('502 unsupported_content_type for a GIF (OCR reads PNG, JPEG, WebP and TIFF)', async () => {
      const r = await post({ url: fx.url('/gif') });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('unsupported_content_type');
    });

    it('decodes a charset from <meta>', async () => {
      const r = await post({ url: fx.url('/latin1'), format: 'text' });
      expect(r.body.content).toContain('Café crème brûlée, naïve façade.');
    });

    it('decodes gzip', async () => {
      const r = await post({ url: fx.url('/gzip'), format: 'text' });
      expect(r.body.title).toBe('Zipped Page');
      expect(r.body.content).toContain('article about gzip');
    });

    it('an upstream 404 is still an envelope with its status', async () => {
      const r = await post({ url: fx.url('/missing'), format: 'text' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: 404, title: 'Not Found' });
    });
  });

  describe('caps', () => {
    it('truncates at a character boundary and says so', async () => {
      // 'ab€😀cd' is a(1) b(1) €(3) 😀(4) c d: 5 bytes would split the euro sign.
      const r = await post({ url: fx.url('/multibyte'), max_bytes: 4 });
      expect(r.body).toMatchObject({ content: 'ab', bytes: 2, truncated: true });
      const r2 = await post({ url: fx.url('/multibyte'), max_bytes: 8 });
      expect(r2.body).toMatchObject({ content: 'ab€', bytes: 5, truncated: true });
      const r3 = await post({ url: fx.url('/multibyte'), max_bytes: 9 });
      expect(r3.body).toMatchObject({ content: 'ab€😀', bytes: 9, truncated: true });
      const full = await post({ url: fx.url('/multibyte') });
      expect(full.body).toMatchObject({ content: 'ab€😀cd', bytes: 11, truncated: false });
      expect(full.body.digest).not.toBe(r3.body.digest);
    });

    it('the class cap applies when lower than max_bytes', async () => {
      const app2 = await createTestApp({ SIFT_FLEET_OUTPUT_CAP: '10', SIFT_FLEET_ALLOW: '127.0.0.0/8' });
      const r = await request(app2.app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/plain'), max_bytes: 1000 });
      expect(r.body).toMatchObject({ content: 'just some ', bytes: 10, truncated: true });
      await app2.app.close();
    });

    it('502 too_large over the download cap, declared or decoded', async () => {
      expect((await post({ url: fx.url('/big') })).body.error.code).toBe('too_large');
      const bomb = await post({ url: fx.url('/gzip-bomb') });
      expect(bomb.status).toBe(502);
      expect(bomb.body.error.code).toBe('too_large');
    });
  });

  describe('redirects', () => {
    it('follows them and reports the final URL', async () => {
      const r = await post({ url: fx.url('/r1') });
      expect(r.body).toMatchObject({
        status: 200,
        final_url: fx.url('/plain'),
        content: 'just some plain text\nsecond line',
      });
    });

    it('502 too_many_redirects for a loop and for more than 5', async () => {
      expect((await post({ url: fx.url('/loop') })).body.error.code).toBe('too_many_redirects');
      expect((await post({ url: fx.url('/chain6') })).body.error.code).toBe('too_many_redirects');
      expect((await post({ url: fx.url('/c1') })).body.content).toBe('end of chain');
    });

    it('403 blocked_address for a redirect to a private address or another scheme', async () => {
      const r = await post({ url: fx.url('/to-private') });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('blocked_address');
      expect((await post({ url: fx.url('/to-ftp') })).body.error.code).toBe('blocked_address');
    });
  });

  describe('network errors', () => {
    it('502 dns_error for a name that does not resolve', async () => {
      const r = await post({ url: 'http://nowhere.test/' });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('dns_error');
    });

    it('502 connect_error for a closed port', async () => {
      // Port 1, where nothing here listens: a port freed by a fixture could be taken again by
      // the next server any test starts.
      const r = await post({ url: 'http://127.0.0.1:1/' });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('connect_error');
    });

    it('502 tls_error when the server does not speak TLS', async () => {
      const r = await post({ url: `https://127.0.0.1:${fx.port}/plain` });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('tls_error');
    });

    it('a caller that hangs up stops the fetch it alone waited for', async () => {
      const server = app.getHttpServer() as http.Server;
      if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const { port } = server.address() as { port: number };
      const body = JSON.stringify({ url: fx.url('/held'), timeout_ms: 20_000 });
      const call = http.request({
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/v1/fetch',
        headers: { ...fleet, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      call.on('error', () => undefined);
      call.end(body);
      const upstream = await waitUntil(() => held[0], 'the fetch to reach the fixture');
      const closed = new Promise<void>((r) => upstream.socket.once('close', () => r()));
      call.destroy();
      const started = Date.now();
      await closed;
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('504 timeout within timeout_ms', async () => {
      const started = Date.now();
      const r = await post({ url: fx.url('/slow'), timeout_ms: 300 });
      expect(r.status).toBe(504);
      expect(r.body.error.code).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(4000);
    });
  });

  describe('callers', () => {
    it('restricted callers never reach loopback; fleet callers reach it inside SIFT_FLEET_ALLOW', async () => {
      const r = await post({ url: fx.url('/plain') }, restricted);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('blocked_address');
      expect((await post({ url: fx.url('/plain', 'fixture.test') }, restricted)).body.error.code).toBe(
        'blocked_address',
      );
      expect((await post({ url: fx.url('/plain', 'fixture.test') })).status).toBe(200);
    });

    it('a name with any blocked record is refused', async () => {
      const r = await post({ url: fx.url('/plain', 'public.test') }, restricted);
      expect(r.body.error.code).toBe('blocked_address');
    });

    it('fleet callers outside SIFT_FLEET_ALLOW are blocked too', async () => {
      const r = await post({ url: 'http://10.0.0.1/' });
      expect(r.body.error.code).toBe('blocked_address');
    });

    it('custom headers: sent for fleet, 403 forbidden for restricted', async () => {
      const r = await post({ url: fx.url('/echo-headers'), format: 'text', headers: { 'X-Probe': 'yes' } });
      expect(JSON.parse(r.body.content)['x-probe']).toBe('yes');
      const r2 = await post({ url: fx.url('/echo-headers'), headers: { 'X-Probe': 'yes' } }, restricted);
      expect(r2.status).toBe(403);
      expect(r2.body.error.code).toBe('forbidden');
    });
  });

  describe('cache', () => {
    it('miss, then hit, then bypass with max_age_s 0 (which stores anew)', async () => {
      const url = fx.url('/counted');
      const a = await post({ url });
      expect(a.body.cached).toBe(false);
      const b = await post({ url });
      expect(b.body.cached).toBe(true);
      expect(b.body.content).toBe(a.body.content);
      expect(fx.hitCount('/counted')).toBe(1);
      const c = await post({ url, max_age_s: 0 });
      expect(c.body.cached).toBe(false);
      expect(fx.hitCount('/counted')).toBe(2);
      const d = await post({ url });
      expect(d.body).toMatchObject({ cached: true, content: c.body.content });
    });

    it('a page asked for again gets the same answer; each cap and URL as written gets its own', async () => {
      const url = fx.url('/article?again');
      const first = await post({ url });
      const hits = [await post({ url }), await post({ url })];
      expect(hits[1].text).toBe(hits[0].text);
      expect(hits[0].body).toEqual({ ...first.body, cached: true });
      for (let i = 0; i < 2; i++) {
        const capped = await post({ url, max_bytes: 100 });
        expect(capped.body).toMatchObject({ cached: true, truncated: true });
        expect(capped.body.bytes).toBeLessThanOrEqual(100);
        expect(capped.body.content).toBe(first.body.content.slice(0, capped.body.content.length));
        const written = await post({ url: `${url}#part` });
        expect(written.body).toMatchObject({ cached: true, url: `${url}#part`, truncated: false });
        expect((await post({ url })).text).toBe(hits[0].text);
      }
    });

    it('an entry older than max_age_s is fetched again', async () => {
      const url = fx.url('/counted?age');
      await post({ url });
      const before = fx.hitCount('/counted');
      clock.t += 61_000;
      expect((await post({ url, max_age_s: 120 })).body.cached).toBe(true);
      expect((await post({ url, max_age_s: 60 })).body.cached).toBe(false);
      expect(fx.hitCount('/counted')).toBe(before + 1);
    });

    it('the format is not part of the key: another format is written from the cached extraction', async () => {
      const url = fx.url('/article?fmt');
      await post({ url, format: 'text' });
      expect((await post({ url, format: 'html' })).body.cached).toBe(true);
      expect((await post({ url, format: 'text' })).body.cached).toBe(true);
    });

    it('single-flight: 10 concurrent requests make one upstream fetch', async () => {
      const url = fx.url('/counted?flight');
      const before = fx.hitCount('/counted');
      const all = await Promise.all(Array.from({ length: 10 }, () => post({ url })));
      expect(all.every((r) => r.status === 200)).toBe(true);
      expect(new Set(all.map((r) => r.body.content)).size).toBe(1);
      expect(fx.hitCount('/counted')).toBe(before + 1);
    });
  });

  describe('bad input', () => {
    it.each([
      [{}, 'url'],
      [{ url: 42 }, 'url'],
      [{ url: 'ftp://x/' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'http://x.test/' + 'a'.repeat(8200) }, 'url'],
      [{ url: 'http://x.test/', format: 'pdf' }, 'format'],
      [{ url: 'http://x.test/', timeout_ms: 0 }, 'timeout_ms'],
      [{ url: 'http://x.test/', timeout_ms: 120001 }, 'timeout_ms'],
      [{ url: 'http://x.test/', max_bytes: -1 }, 'max_bytes'],
      [{ url: 'http://x.test/', max_age_s: 'old' }, 'max_age_s'],
      [{ url: 'http://x.test/', headers: { 'Bad Header': 'x' } }, 'headers'],
      [{ url: 'http://x.test/', headers: ['x'] }, 'headers'],
      [{ url: 'http://x.test/', extra: 1 }, 'extra'],
    ])('400 invalid_request for bad %#', async (body, field) => {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
      expect(r.body.error.message).toContain(field);
      expect(r.body.error.hint).toBeTruthy();
    });

    it('400 for malformed JSON', async () => {
      const r = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .set('content-type', 'application/json')
        .send('{"url": ');
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_request' });
    });

    it('413 for an oversized body', async () => {
      const r = await post({ url: 'http://x.test/', pad: 'x'.repeat(33 * 1024 * 1024) });
      expect(r.status).toBe(413);
      expect(r.body.error.code).toBe('payload_too_large');
    });

    it('404 envelope for an unknown route', async () => {
      const r = await request(app.getHttpServer()).get('/v1/nothing').set(fleet);
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'not_found' });
    });

    it('400 for a reserved header', async () => {
      const r = await post({ url: fx.url('/plain'), headers: { Host: 'evil.test' } });
      expect(r.status).toBe(400);
    });
  });
});

describe('POST /v1/fetch: bodies the compiled DTO rules pass and those left to the full pipe', () => {
  let app: INestApplication;
  let fx: Fixture;
  let handler: jest.SpyInstance;
  const post = (body: object) => request(app.getHttpServer()).post('/v1/fetch').set(fleet).send(body);

  beforeAll(async () => {
    fx = await new Fixture({
      '/article': send(200, 'text/html; charset=utf-8', articleHtml('Gate Page', 6, 'gate')),
    }).start();
    // Installed before the app starts (Nest keeps the handler it finds then), with the route's
    // metadata, which Nest reads from the handler itself.
    const route = FetchController.prototype.fetch;
    handler = jest.spyOn(FetchController.prototype, 'fetch');
    for (const key of Reflect.getMetadataKeys(route)) {
      Reflect.defineMetadata(key, Reflect.getMetadata(key, route), FetchController.prototype.fetch);
    }
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });

  afterAll(async () => {
    await app.close();
    await fx.stop();
    handler.mockRestore();
  });

  beforeEach(() => handler.mockClear());

  it('both reach the route and get the same envelope', async () => {
    const gate = await post({ url: fx.url('/article'), format: 'text', max_age_s: 0 });
    expect(gate.status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
    // A header map is an object: the compiled rules leave it to the full pipe.
    const routed = await post({
      url: fx.url('/article'),
      format: 'text',
      max_age_s: 0,
      headers: { 'x-k': '1' },
    });
    expect(routed.status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(2);
    const same = (b: Record<string, unknown>) => ({ ...b, fetched_at: undefined });
    expect(same(gate.body)).toEqual(same(routed.body));
    expect(gate.body.content).toContain('gate');
    expect(gate.headers['content-type']).toBe(routed.headers['content-type']);
  });

  it('and the same error envelopes', async () => {
    const gate = await post({ url: 'http://127.0.0.1:1/' });
    const routed = await post({ url: 'http://127.0.0.1:1/', headers: { 'x-k': '1' } });
    expect(handler).toHaveBeenCalledTimes(2);
    expect(gate.status).toBe(502);
    expect(gate.body).toEqual(routed.body);
    expect(gate.body.error).toMatchObject({ code: 'connect_error' });
    expect(gate.body.error.hint).toBeTruthy();
  });

  it('a body the rules refuse goes to the pipe, which names the field', async () => {
    const r = await post({ url: fx.url('/article'), format: 'pdf' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('format');
    expect(handler).not.toHaveBeenCalled();
  });
});

void zlib;
