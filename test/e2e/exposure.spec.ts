import * as http from 'node:http';
import * as net from 'node:net';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import {
  createTestApp,
  FLEET_TOKEN,
  RESTRICTED_TOKEN,
  tableResolver,
  waitForJob,
  waitUntil,
  fleet,
  restricted,
} from '../support/app';
import { articleHtml, Fixture, html, redirect, send } from '../support/fixture';
import { fingerprint } from '../../src/api/auth.guard';
import { ClientStore } from '../../src/dcache';
import type { Resolver } from '../../src/fetch/fetcher';
import { SingleFlight } from '../../src/fetch/single-flight';

const BOB = 'bob-token-0123456789';
const CAROL = 'carol-token-0123456789';
const bob = { Authorization: `Bearer ${BOB}` };
const carol = { Authorization: `Bearer ${CAROL}` };
const MiB = 1024 * 1024;

/**
 * The system resolver as the thread pool makes it: at most 4 lookups at once, the rest wait. A
 * black-holed name holds its thread until the test lets go of it.
 */
function poolResolver(answers: Resolver) {
  let busy = 0;
  const waiting: (() => void)[] = [];
  const holes: (() => void)[] = [];
  const resolver: Resolver = async (host) => {
    if (busy >= 4) await new Promise<void>((r) => waiting.push(r));
    busy++;
    try {
      if (host.endsWith('.blackhole.test')) {
        await new Promise<void>((r) => holes.push(r));
        throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
      }
      return await answers(host);
    } finally {
      busy--;
      waiting.shift()?.();
    }
  };
  return { resolver, release: () => holes.splice(0).forEach((r) => r()) };
}

/** Opens a stream and resolves with the response once its headers arrive. */
function openStream(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; res: http.IncomingMessage; req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers }, (res) =>
      resolve({ status: res.statusCode!, res, req }),
    );
    req.on('error', reject);
  });
}

describe('exposure and abuse: what a caller can send, reach and hold', () => {
  let app: INestApplication;
  let fx: Fixture;
  let other: Fixture;
  let base: string;
  const holds: (() => void)[] = [];
  const aborted = new Map<string, number>();
  const pool = poolResolver(
    tableResolver({
      'fixture.test': ['127.0.0.1'],
      'fresh.test': ['127.0.0.1'],
      'ten.test': ['10.0.0.5'],
      localhost: ['127.0.0.1'],
    }),
  );
  const started = new Set<string>();
  // A supertest request starts when it is awaited; then() starts it now.
  const post = (path: string, body: object, headers: Record<string, string> = fleet) =>
    request(app.getHttpServer())
      .post(path)
      .set(headers)
      .send(body)
      .then((r) => r);

  beforeAll(async () => {
    other = await new Fixture({
      '/echo-headers': (req, res) => send(200, 'application/json', JSON.stringify(req.headers))(req, res),
    }).start();
    fx = await new Fixture({
      '/echo-headers': (req, res) => send(200, 'application/json', JSON.stringify(req.headers))(req, res),
      '/to-same': redirect('/echo-headers'),
      '/to-other': redirect(other.url('/echo-headers')),
      '/article': send(200, 'text/html', articleHtml('Userinfo Article', 4)),
      '/slow': (req, res) => {
        const u = new URL(req.url!, 'http://x');
        started.add(u.search);
        const timer = setTimeout(
          () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`slow ${u.search}`),
          Number(u.searchParams.get('ms')),
        );
        res.on('close', () => {
          if (!res.writableFinished) {
            clearTimeout(timer);
            aborted.set(u.search, (aborted.get(u.search) ?? 0) + 1);
          }
        });
      },
      // Answered when the test lets go (holds); its start and an abort are noted by query as /slow's.
      '/hold': (req, res) => {
        const search = new URL(req.url!, 'http://x').search;
        started.add(search);
        res.on('close', () => {
          if (!res.writableFinished) aborted.set(search, (aborted.get(search) ?? 0) + 1);
        });
        holds.push(() => res.writeHead(200, { 'content-type': 'text/plain' }).end(`held ${search}`));
      },
      '/text/*': (req, res) => {
        const size = Number(new URL(req.url!, 'http://x').searchParams.get('bytes'));
        res.writeHead(200, { 'content-type': 'text/plain' }).end('t'.repeat(size));
      },
    }).start();
    ({ app } = await createTestApp(
      {
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_TOKENS: [
          `${FLEET_TOKEN}:fleet-caller:fleet`,
          `${RESTRICTED_TOKEN}:restricted-caller:restricted`,
          `${BOB}:bob:fleet`,
          `${CAROL}:carol:fleet`,
        ].join(','),
        SIFT_FLEET_FETCH_CONCURRENCY: '3',
        SIFT_FLEET_MAX_STREAMS: '2',
        SIFT_FLEET_OUTPUT_CAP: String(9 * MiB),
        SIFT_HEADERS_TIMEOUT_MS: '500',
        SIFT_REQUEST_TIMEOUT_MS: '1000',
        SIFT_DNS_TIMEOUT_MS: '300',
        SIFT_DNS_PER_CALLER: '2',
      },
      { resolver: pool.resolver },
    ));
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    base = base.replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    holds.splice(0).forEach((h) => h());
    pool.release();
    await app.close();
    await fx.stop();
    await other.stop();
  });

  describe('authentication before the body; encodings and sizes', () => {
    it('an unauthenticated body is never parsed: 401 even for JSON that does not parse', async () => {
      const r = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set('content-type', 'application/json')
        .send('{not json');
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    });

    it('415 unsupported_encoding for an encoded body', async () => {
      for (const encoding of ['gzip', 'deflate', 'br', 'x-anything']) {
        const r = await request(app.getHttpServer())
          .post('/v1/fetch')
          .set({ ...fleet, 'content-type': 'application/json', 'content-encoding': encoding })
          .send(Buffer.from('{"url":"http://x.test/"}'));
        expect([encoding, r.status, r.body.error.code]).toEqual([encoding, 415, 'unsupported_encoding']);
        expect(r.body.error.hint).toBeTruthy();
      }
      const identity = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set({ ...fleet, 'content-encoding': 'identity' })
        .send({ url: fx.url('/article') });
      expect(identity.status).toBe(200);
    });

    it('413 payload_too_large past the route limit, by Content-Length and when streamed', async () => {
      const big = { url: fx.url('/article'), pad: 'x'.repeat(70 * 1024) };
      const r = await post('/v1/fetch', big);
      expect(r.status).toBe(413);
      expect(r.body.error).toMatchObject({ code: 'payload_too_large' });
      expect(r.body.error.message).toContain('64 KiB');
      // Chunked, with no Content-Length: cut at the limit.
      const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${base}/v1/fetch`, {
          method: 'POST',
          headers: { ...fleet, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.write('{"url":"');
        for (let i = 0; i < 80; i++) req.write('x'.repeat(1024));
        req.end('"}');
      });
      expect(streamed.status).toBe(413);
      expect(JSON.parse(streamed.body).error.code).toBe('payload_too_large');
    });

    it('reads a JSON body as UTF-8 only, a BOM skipped; anything else is named', async () => {
      const send = (type: string | undefined, body: string) => {
        const r = request(app.getHttpServer()).post('/v1/fetch').set(fleet);
        return type === undefined ? r.send(body) : r.set('content-type', type).send(body);
      };
      const url = JSON.stringify({ url: fx.url('/article') });
      const ok = await send('application/json; charset=UTF-8', `\ufeff ${url}`);
      expect([ok.status, ok.body.title]).toEqual([200, 'Userinfo Article']);
      expect(ok.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Number(ok.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(ok.body)));

      const utf16 = await send('application/json; charset=utf-16le', url);
      expect([utf16.status, utf16.body.error.code]).toEqual([415, 'unsupported_media_type']);
      expect(utf16.body.error.message).toContain('utf-16le');
      // A JSON text that is not an object or an array, or no JSON text at all.
      for (const body of ['"http://x.test/"', '42', 'null', ' \n ']) {
        const r = await send('application/json', body);
        expect([body, r.status, r.body.error.message]).toEqual([body, 400, 'the body is not valid JSON']);
      }
      const empty = await send('application/json', '');
      expect([empty.status, empty.body.error.code]).toEqual([400, 'invalid_request']);
      expect(empty.body.error.message).toContain('url');
      // Not JSON by its media type: not read, and said so.
      const text = await send('text/plain', url);
      expect([text.status, text.body.error.code]).toEqual([415, 'unsupported_media_type']);
    });

    it('/v1/batch takes 2 MiB from a restricted caller and 32 MiB from a fleet caller', async () => {
      // 2.5 MiB: 900 targets with long URLs (port 1: nothing listens, they fail at once).
      const targets = Array.from({ length: 900 }, (_, i) => ({
        url: `http://127.0.0.1:1/${i}-${'p'.repeat(2900)}`,
      }));
      const r = await post('/v1/batch', { targets }, restricted);
      expect(r.status).toBe(413);
      expect(r.body.error.message).toContain('2 MiB');
      const ok = await post('/v1/batch', { targets }, fleet);
      expect(ok.status).toBe(202);
      await request(app.getHttpServer()).delete(`/v1/batch/${ok.body.id}`).set(fleet);
    });
  });

  it("the caller's headers are dropped when a redirect changes origin, kept when it does not", async () => {
    const headers = {
      authorization: 'Bearer upstream-secret',
      cookie: 'session=1',
      'x-api-key': 'key-for-the-first-site',
      'x-trace': 'kept',
    };
    const echo = async (url: string) => {
      const r = await post('/v1/fetch', { url, format: 'text', max_age_s: 0, headers });
      expect(r.status).toBe(200);
      return JSON.parse(r.body.content) as Record<string, string>;
    };
    const same = await echo(fx.url('/to-same'));
    expect(same).toMatchObject(headers);
    // Another port, and another host name for the same address: both are other origins.
    for (const url of [fx.url('/to-other'), fx.url('/to-other', 'fixture.test')]) {
      const seen = await echo(url);
      expect([seen.authorization, seen.cookie, seen['x-api-key'], seen['x-trace']]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      expect(seen['user-agent']).toBeDefined();
    }
  });

  describe('per-caller concurrency, streams and the extraction queue', () => {
    it('a fleet caller past its /v1/fetch cap gets 429 with Retry-After; others are not affected', async () => {
      // Three calls held upstream until the caller's fourth has been refused.
      const held = [1, 2, 3].map((i) =>
        post('/v1/fetch', { url: fx.url(`/hold?k=cap${i}`), format: 'text', max_age_s: 0 }),
      );
      await waitUntil(
        () => (['?k=cap1', '?k=cap2', '?k=cap3'].every((k) => started.has(k)) ? true : undefined),
        'three calls in flight',
      );
      const inFlight = await post('/v1/fetch', { url: fx.url('/slow?ms=1&k=cap-probe'), max_age_s: 0 });
      expect(inFlight.status).toBe(429);
      expect(inFlight.body.error.code).toBe('too_many_requests');
      expect(inFlight.headers['retry-after']).toBeDefined();
      const byBob = await post('/v1/fetch', { url: fx.url('/slow?ms=1&k=bob'), max_age_s: 0 }, bob);
      expect(byBob.status).toBe(200);
      holds.splice(0).forEach((h) => h());
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200]);
      const after = await post('/v1/fetch', { url: fx.url('/slow?ms=1&k=after'), max_age_s: 0 });
      expect(after.status).toBe(200);
    });

    it('a caller past its stream cap gets 429 for SSE and NDJSON; closing one makes room', async () => {
      const job = await post('/v1/batch', { targets: [{ url: fx.url('/hold') }] });
      expect(job.status).toBe(202);
      const id = job.body.id as string;
      const sse = { ...fleet, Accept: 'text/event-stream' };
      const open = [
        await openStream(base, `/v1/batch/${id}/events`, sse),
        await openStream(base, `/v1/batch/${id}/events`, sse),
      ];
      expect(open.map((s) => s.status)).toEqual([200, 200]);
      const third = await request(app.getHttpServer()).get(`/v1/batch/${id}/events`).set(sse);
      expect(third.status).toBe(429);
      expect(third.body.error.code).toBe('too_many_requests');
      expect(third.headers['retry-after']).toBeDefined();
      const nd = await request(app.getHttpServer())
        .get(`/v1/batch/${id}/results`)
        .set({ ...fleet, Accept: 'application/x-ndjson' });
      expect(nd.status).toBe(429);
      // The JSON forms are not streams.
      expect((await request(app.getHttpServer()).get(`/v1/batch/${id}/events`).set(fleet)).status).toBe(200);
      open[0].req.destroy();
      const again = await waitUntil(async () => {
        const s = await openStream(base, `/v1/batch/${id}/events`, sse);
        if (s.status === 200) return s;
        s.res.resume();
        return undefined;
      }, 'a stream to be admitted after one closed');
      again.req.destroy();
      open[1].req.destroy();
      await request(app.getHttpServer()).delete(`/v1/batch/${id}`).set(fleet);
      holds.splice(0).forEach((h) => h());
    });
  });

  it('a results page stops at about 8 MiB; one larger result goes alone; next continues', async () => {
    const targets = [
      ...Array.from({ length: 10 }, (_, i) => ({ url: fx.url(`/text/${i}?bytes=${1.5 * MiB}`) })),
      { url: fx.url(`/text/huge?bytes=${8.5 * MiB}`) },
    ];
    const job = await post('/v1/batch', { targets, options: { format: 'text' } });
    expect(job.status).toBe(202);
    const id = job.body.id as string;
    await waitForJob(app, id);
    const pages: { idx: number[]; bytes: number }[] = [];
    let after = -1;
    for (;;) {
      const r = await request(app.getHttpServer())
        .get(`/v1/batch/${id}/results?after=${after}&limit=1000`)
        .set(fleet);
      expect(r.status).toBe(200);
      pages.push({ idx: r.body.results.map((t: { idx: number }) => t.idx), bytes: r.text.length });
      if (r.body.next === null) break;
      after = r.body.next;
    }
    expect(pages.map((p) => p.idx)).toEqual([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10]]);
    for (const p of pages.slice(0, 2)) expect(p.bytes).toBeLessThanOrEqual(8 * MiB + 64 * 1024);
  });

  it('the class target limit is checked before the body is validated', async () => {
    // 1,001 targets, one of them invalid: the count answers first.
    const targets: object[] = Array.from({ length: 1001 }, (_, i) => ({ url: `http://example.test/${i}` }));
    targets[500] = { url: 5 };
    const r = await post('/v1/batch', { targets }, restricted);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('too_many_targets');
  });

  it('a restricted caller is told the host it may not reach, never the address', async () => {
    const r = await post('/v1/fetch', { url: fx.url('/article', 'localhost') }, restricted);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('blocked_address');
    expect(r.body.error.message).toContain('localhost');
    expect(r.body.error.message).not.toContain('127.0.0.1');
    const asFleet = await post('/v1/fetch', { url: 'http://ten.test/' }, fleet);
    expect(asFleet.body.error.message).toContain('10.0.0.5');
  });

  describe('single-flight waiters keep their own timeout and cancel', () => {
    it("one waiter's short timeout does not fail another", async () => {
      // The shared fetch is held until the quick waiter has given up. The patient one must join
      // before that, and nothing bounds how long its request takes to reach the flight on a loaded
      // machine: the quick one's 2 s leave it far more than it takes (a few ms idle).
      const url = fx.url('/hold?k=sf');
      const quick = post('/v1/fetch', { url, timeout_ms: 2000 }, bob);
      await waitUntil(() => (started.has('?k=sf') ? true : undefined), 'the shared fetch to start');
      const patient = post('/v1/fetch', { url, timeout_ms: 30_000 }, carol);
      const q = await quick;
      expect(q.status).toBe(504);
      expect(q.body.error.code).toBe('timeout');
      holds.splice(0).forEach((h) => h());
      const p = await patient;
      expect(p.status).toBe(200);
      expect(p.body.content).toContain('k=sf');
      expect(aborted.get('?k=sf')).toBeUndefined();
    });

    it('the shared fetch is aborted once no waiter is left', async () => {
      const r = await post('/v1/fetch', { url: fx.url('/hold?k=alone'), timeout_ms: 300 }, bob);
      expect(r.status).toBe(504);
      await waitUntil(() => aborted.get('?k=alone'), 'the upstream fetch to be aborted');
    });

    it('cancelling a job does not abort a fetch another caller joined', async () => {
      // A caller joins when it asks for a key whose load is under way (SingleFlight.run).
      const run = SingleFlight.prototype.run;
      const open = new Map<string, number>();
      let joins = 0;
      jest.spyOn(SingleFlight.prototype, 'run').mockImplementation(function (
        this: SingleFlight<unknown>,
        key,
        ...rest
      ) {
        if ((open.get(key) ?? 0) > 0) joins++;
        open.set(key, (open.get(key) ?? 0) + 1);
        return run.call(this, key, ...rest).finally(() => open.set(key, open.get(key)! - 1));
      });
      try {
        const url = fx.url('/hold?k=job');
        const job = await post('/v1/batch', { targets: [{ url }] });
        await waitUntil(() => (started.has('?k=job') ? true : undefined), 'the job to start its fetch');
        const joined = post('/v1/fetch', { url }, carol);
        await waitUntil(() => joins > 0 || undefined, "the caller to join the job's fetch");
        const cancelled = await request(app.getHttpServer()).delete(`/v1/batch/${job.body.id}`).set(fleet);
        expect(cancelled.status).toBe(200);
        holds.splice(0).forEach((h) => h());
        const r = await joined;
        expect(r.status).toBe(200);
        expect(r.body.content).toContain('k=job');
        expect(aborted.get('?k=job')).toBeUndefined();
      } finally {
        jest.restoreAllMocks();
      }
    });
  });

  it('a job is visible to its caller name and class only', async () => {
    // Start-up and `token create` refuse a name with two classes; a row written behind their back
    // still cannot cross the line.
    await app.get(ClientStore).addClient({
      fingerprint: fingerprint('impostor-token-0123456789'),
      caller: 'fleet-caller',
      callerClass: 'restricted',
      createdAt: 1,
    });
    const job = await post('/v1/batch', { targets: [{ url: 'http://127.0.0.1:1/' }] });
    expect(job.status).toBe(202);
    const impostor = { Authorization: 'Bearer impostor-token-0123456789' };
    for (const path of ['', '/results', '/events']) {
      const r = await request(app.getHttpServer()).get(`/v1/batch/${job.body.id}${path}`).set(impostor);
      expect([path, r.status]).toEqual([path, 404]);
    }
    expect((await request(app.getHttpServer()).get(`/v1/batch/${job.body.id}`).set(fleet)).status).toBe(200);
  });

  it('the local-use NAT64 prefix 64:ff9b:1::/48 is not public', async () => {
    const r = await post('/v1/fetch', { url: 'http://[64:ff9b:1::a00:1]/' }, restricted);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('blocked_address');
  });

  it('black-holed DNS names of one caller do not stall the lookups of another', async () => {
    const holes = Array.from({ length: 6 }, (_, i) =>
      post('/v1/fetch', { url: `http://n${i}.blackhole.test/` }, restricted),
    );
    // While those hold what they may of the resolver's threads, a fleet lookup still goes through.
    const ok = await post('/v1/fetch', { url: fx.url('/article', 'fresh.test'), timeout_ms: 5000 });
    expect(ok.status).toBe(200);
    const answers = await Promise.all(holes);
    expect(answers.map((a) => [a.status, a.body.error.code])).toEqual(
      Array.from({ length: 6 }, () => [403, 'blocked_address']),
    );
    // The same words as for a private name: a restricted caller cannot tell the two apart.
    expect(answers[0].body.error.message).toBe('n0.blackhole.test is not reachable for this caller');
  });

  it('the envelope carries no userinfo in url or final_url', async () => {
    const r = await post('/v1/fetch', { url: fx.url('/article').replace('http://', 'http://user:pw@') });
    expect(r.status).toBe(200);
    expect(r.body.url).toBe(fx.url('/article'));
    expect(r.body.final_url).toBe(fx.url('/article'));
    expect(JSON.stringify(r.body)).not.toContain('pw@');
  });

  describe('server timeouts', () => {
    const raw = (text: string) =>
      new Promise<{ reply: string; ms: number }>((resolve) => {
        const started = Date.now();
        const s = net.connect(Number(new URL(base).port), '127.0.0.1', () => s.write(text));
        let reply = '';
        s.on('data', (d) => (reply += d));
        s.on('close', () => resolve({ reply, ms: Date.now() - started }));
        s.on('error', () => undefined);
      });

    it('headers that do not arrive in time: 408 and the socket closed', async () => {
      const { reply, ms } = await raw('POST /v1/fetch HTTP/1.1\r\nHost: x\r\n');
      expect(reply).toMatch(/^HTTP\/1\.1 408/);
      expect(ms).toBeLessThan(5000);
    });

    it('a body that does not arrive in time: 408 and the socket closed', async () => {
      const { reply, ms } = await raw(
        `POST /v1/fetch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${FLEET_TOKEN}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"url":',
      );
      expect(reply).toMatch(/^HTTP\/1\.1 408/);
      expect(ms).toBeLessThan(5000);
    });
  });
});

describe('exposure and abuse: a bounded extraction queue', () => {
  let app: INestApplication;
  let fx: Fixture;
  const page = (i: number) =>
    html(`<article>${`<p>Paragraph ${i} with words enough to count. </p>`.repeat(6000)}</article>`);

  beforeAll(async () => {
    fx = await new Fixture({
      '/big/*': (req, res) => send(200, 'text/html', page(Number(req.url!.split('/').pop())))(req, res),
    }).start();
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_EXTRACT_WORKERS: '1',
      SIFT_EXTRACT_QUEUE: '1',
    }));
  });

  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  it('/v1/fetch past the queue gets 503 server_busy; the runner waits and finishes every target', async () => {
    const job = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: Array.from({ length: 6 }, (_, i) => ({ url: fx.url(`/big/${100 + i}`) })) });
    expect(job.status).toBe(202);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(app.getHttpServer())
          .post('/v1/fetch')
          .set(fleet)
          .send({ url: fx.url(`/big/${i}`) }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    const busy = answers.filter((a) => a.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0].body.error.code).toBe('server_busy');
    expect(busy[0].headers['retry-after']).toBeDefined();
    const done = await waitForJob(app, job.body.id as string);
    expect(done).toMatchObject({ status: 'done', targets_done: 6, targets_failed: 0 });
  }, 60_000);
});
