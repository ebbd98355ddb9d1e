import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ExtractPool } from '../../src/extract/extract-pool';
import type { Resolver } from '../../src/fetch/fetcher';
import {
  createTestApp,
  defaultResolver,
  TestClock,
  waitForJob,
  waitUntil,
  fleet,
  restricted,
} from '../support/app';
import { Fixture, html, send, type Handler } from '../support/fixture';

/**
 * The knobs no other suite turns: each set to a value of its own on the real app, and the
 * behaviour it names seen to follow it (the default would fail each of these).
 */

/** A resolver that holds every lookup of held.test until released (then: no such name). */
function holdingResolver() {
  const holds: (() => void)[] = [];
  const resolver: Resolver = async (host) => {
    if (host !== 'held.test') return defaultResolver(host);
    await new Promise<void>((r) => holds.push(r));
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };
  return { resolver, release: () => holds.splice(0).forEach((r) => r()) };
}

/** Opens a stream and resolves once its headers arrive. */
function openStream(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; req: http.ClientRequest }>((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => resolve({ status: res.statusCode!, req }));
    req.on('error', reject);
  });
}

describe('caller and job limits', () => {
  let app: INestApplication;
  let dns: ReturnType<typeof holdingResolver>;
  const clock = new TestClock(Date.now());
  const http_ = () => request(app.getHttpServer());
  const submit = (headers: Record<string, string>, targets: string[], key?: string) => {
    const r = http_().post('/v1/batch').set(headers);
    return (key ? r.set('Idempotency-Key', key) : r).send({ targets: targets.map((url) => ({ url })) });
  };

  beforeEach(async () => {
    dns = holdingResolver();
    ({ app } = await createTestApp(
      {
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_DNS_TIMEOUT_MS: '60000',
        SIFT_FLEET_MAX_TARGETS: '3',
        SIFT_MAX_LIVE_JOBS: '2',
        SIFT_RESTRICTED_MAX_LIVE_JOBS: '1',
        SIFT_RESTRICTED_FETCH_CONCURRENCY: '1',
        SIFT_RESTRICTED_MAX_STREAMS: '1',
        SIFT_IDEM_TTL_S: '60',
      },
      { resolver: dns.resolver, clock },
    ));
  });
  afterEach(async () => {
    dns.release();
    await app.close();
  });

  it('SIFT_FLEET_MAX_TARGETS: a fleet job of 4 targets is refused past 3', async () => {
    const four = await submit(
      fleet,
      ['1', '2', '3', '4'].map((i) => `http://10.0.0.${i}/`),
    );
    expect([four.status, four.body.error.code]).toEqual([400, 'too_many_targets']);
    expect(four.body.error.message).toContain('over the 3 a fleet caller may send');
    const three = await submit(
      fleet,
      ['1', '2', '3'].map((i) => `http://10.0.0.${i}/`),
    );
    expect(three.status).toBe(202);
  });

  it('SIFT_MAX_LIVE_JOBS: a third live job of anyone is 503 server_busy', async () => {
    expect((await submit(fleet, ['http://held.test/a'])).status).toBe(202);
    expect((await submit(fleet, ['http://held.test/b'])).status).toBe(202);
    const third = await submit(restricted, ['http://held.test/c']);
    expect([third.status, third.body.error.code]).toEqual([503, 'server_busy']);
    expect(third.headers['retry-after']).toBeDefined();
  });

  it('SIFT_RESTRICTED_MAX_LIVE_JOBS: a restricted caller with one live job gets 429 for another', async () => {
    expect((await submit(restricted, ['http://held.test/a'])).status).toBe(202);
    const second = await submit(restricted, ['http://10.0.0.1/']);
    expect([second.status, second.body.error.code]).toEqual([429, 'too_many_jobs']);
    expect((await submit(fleet, ['http://10.0.0.1/'])).status).toBe(202);
  });

  it('SIFT_RESTRICTED_FETCH_CONCURRENCY: a second /v1/fetch of a restricted caller is 429 while one is in flight', async () => {
    const held = http_().post('/v1/fetch').set(restricted).send({ url: 'http://held.test/' }).then();
    // A probe that is admitted ends at once (blocked_address): it is refused once the first is in.
    const refused = await waitUntil(async () => {
      const r = await http_().post('/v1/fetch').set(restricted).send({ url: 'http://10.0.0.1/' });
      return r.status === 429 ? r : undefined;
    }, 'a second call to be refused');
    expect(refused.body.error.code).toBe('too_many_requests');
    dns.release();
    // A restricted caller is told of a name that does not resolve what it is told of a private one.
    expect((await held).body.error.code).toBe('blocked_address');
  });

  it('SIFT_RESTRICTED_MAX_STREAMS: a second event stream of a restricted caller is 429', async () => {
    const job = await submit(restricted, ['http://held.test/']);
    await app.listen(0, '127.0.0.1');
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/batch/${job.body.id}/events`;
    const sse = { ...restricted, Accept: 'text/event-stream' };
    const first = await openStream(url, sse);
    const second = await openStream(url, sse);
    expect([first.status, second.status]).toEqual([200, 429]);
    first.req.destroy();
    second.req.destroy();
  });

  it('SIFT_IDEM_TTL_S: a key is replayed within 60 s of the job’s last activity, a new job after', async () => {
    const fx = await new Fixture({ '/p': send(200, 'text/plain', 'a page') }).start();
    try {
      const first = await submit(fleet, [fx.url('/p')], 'k-ttl');
      expect(first.status).toBe(202);
      await waitForJob(app, first.body.id);
      clock.t += 59_000;
      const replay = await submit(fleet, [fx.url('/p')], 'k-ttl');
      expect([replay.status, replay.body.id]).toEqual([200, first.body.id]);
      clock.t += 61_000;
      const fresh = await submit(fleet, [fx.url('/p')], 'k-ttl');
      expect(fresh.status).toBe(202);
      expect(fresh.body.id).not.toBe(first.body.id);
      await waitForJob(app, fresh.body.id);
    } finally {
      await fx.stop();
    }
  });
});

describe('what sift sends as and follows', () => {
  let app: INestApplication;
  let fx: Fixture;
  const agents: string[] = [];

  const seen =
    (handler: Handler): Handler =>
    (req, res) => {
      agents.push(`${req.url} ${req.headers['user-agent']}`);
      handler(req, res);
    };
  const article = (req: http.IncomingMessage, paragraphs: number) =>
    html(
      `<article>${`<p>The page ${req.url} has words enough to be read.</p>`.repeat(paragraphs)}</article>`,
    );

  beforeAll(async () => {
    fx = await new Fixture({
      '/robots.txt': seen(
        send(200, 'text/plain', 'User-agent: *\nDisallow: /\n\nUser-agent: knobbot\nDisallow: /private\n'),
      ),
      '/big/*': seen((req, res) => send(200, 'text/html', article(req, 250))(req, res)),
      '/*': seen((req, res) => send(200, 'text/html', article(req, 1))(req, res)),
    }).start();
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_USER_AGENT: 'knob-probe/2.0 (+https://example.test/bot)',
      SIFT_ROBOTS_AGENT: 'knobbot',
      SIFT_CACHE_MAX_BYTES: '40000',
    }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });
  const fetchPage = (path: string, extra: object = {}) =>
    request(app.getHttpServer())
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url(path), format: 'text', ...extra });

  it('SIFT_ROBOTS_AGENT: the group naming it applies, not the `*` one', async () => {
    expect((await fetchPage('/open')).status).toBe(200);
    const denied = await fetchPage('/private/x');
    expect([denied.status, denied.body.error.code]).toEqual([403, 'robots_denied']);
    expect(denied.body.error.message).toContain('for knobbot');
  });

  it('SIFT_USER_AGENT: every request carries it, robots.txt too', async () => {
    await fetchPage('/agent', { max_age_s: 0 });
    expect(agents).toContain('/robots.txt knob-probe/2.0 (+https://example.test/bot)');
    expect(agents).toContain('/agent knob-probe/2.0 (+https://example.test/bot)');
    expect(agents.every((a) => a.endsWith(' knob-probe/2.0 (+https://example.test/bot)'))).toBe(true);
  });

  it('SIFT_CACHE_MAX_BYTES: the cache keeps under 40,000 bytes, the oldest pages evicted first', async () => {
    for (let i = 0; i < 6; i++) expect((await fetchPage(`/big/${i}`)).status).toBe(200);
    const metrics = (await request(app.getHttpServer()).get('/metrics')).text;
    const stat = (name: string) =>
      Number(new RegExp(`^sift_cache\\{stat="${name}"\\} (\\d+)`, 'm').exec(metrics)?.[1]);
    expect(stat('max_bytes')).toBe(40_000);
    expect(stat('bytes')).toBeLessThanOrEqual(40_000);
    expect(stat('evictions')).toBeGreaterThan(0);
    expect((await fetchPage('/big/5')).body.cached).toBe(true);
    expect((await fetchPage('/big/0')).body.cached).toBe(false);
  });
});

it('SIFT_EXTRACT_WORKERS: 0 extracts on the main thread, without a pool of threads', async () => {
  const fx = await new Fixture({
    '/a': send(200, 'text/html', html('<article><p>An article with words enough to be read.</p></article>')),
  }).start();
  const { app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_EXTRACT_WORKERS: '0' });
  try {
    expect(app.get(ExtractPool).size).toBe(0); // the default is one a core, at least one
    const r = await request(app.getHttpServer())
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/a') });
    expect([r.status, r.body.content]).toEqual([200, expect.stringContaining('An article with words')]);
  } finally {
    await app.close();
    await fx.stop();
  }
});

/** A webhook receiver that answers 500, or never answers; it notes when each delivery came. */
class Hook {
  mode: 'fail' | 'hold' = 'fail';
  readonly arrivals: { jobId: string; at: number; mode: string }[] = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      this.arrivals.push({ jobId: JSON.parse(body).job_id, at: Date.now(), mode: this.mode });
      if (this.mode === 'fail') res.writeHead(500).end('no');
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return this;
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

describe('webhook knobs', () => {
  let app: INestApplication;
  let hook: Hook;
  let fx: Fixture;
  let clock: TestClock;
  const http_ = () => request(app.getHttpServer());
  const start = async (env: Record<string, string>) => {
    clock = new TestClock(Date.now());
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', ...env }, { clock }));
  };
  const jobWithHook = async () => {
    const r = await http_()
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [{ url: fx.url('/p') }],
        webhook: {
          url: hook.url,
          secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
          events: ['batch.done'],
        },
      });
    expect(r.status).toBe(202);
    return r.body.id as string;
  };
  /** The job's one delivery, as the API shows it. (A claim counts its attempt before it is sent.) */
  const delivery = async (id: string) =>
    (await http_().get(`/v1/batch/${id}/deliveries`).set(fleet)).body.deliveries[0] as
      | {
          state: string;
          attempts: number;
          next_attempt_at: string | null;
          last_error: { code: string } | null;
        }
      | undefined;
  /** Waits until the delivery's attempt `n` has ended in `state`. */
  const attemptEnded = (id: string, n: number, state: string) =>
    waitUntil(async () => {
      const d = await delivery(id);
      if (d?.attempts !== n || d.state !== state) return undefined;
      // Pending again once its next attempt is set in the future; failed is written when it ends.
      return state !== 'pending' || Date.parse(d.next_attempt_at!) > clock.nowMs() ? d : undefined;
    }, `attempt ${n} of ${id} to end ${state}`);

  beforeAll(async () => {
    fx = await new Fixture({ '/p': send(200, 'text/plain', 'a page') }).start();
  });
  beforeEach(async () => {
    hook = await new Hook().start();
  });
  afterEach(async () => {
    await app.close();
    await hook.stop();
  });
  afterAll(() => fx.stop());

  it('SIFT_WEBHOOK_GIVE_UP_S: a delivery whose next attempt would fall past 25 s is given up', async () => {
    await start({ SIFT_WEBHOOK_RETRY_S: '10', SIFT_WEBHOOK_GIVE_UP_S: '25' });
    const id = await jobWithHook();
    await attemptEnded(id, 1, 'pending'); // the next at +10 s
    clock.t += 11_000;
    await attemptEnded(id, 2, 'pending'); // the next at +21 s
    clock.t += 11_000;
    await attemptEnded(id, 3, 'failed'); // the next would be at +32 s
    expect(hook.arrivals).toHaveLength(3);
  });

  it('SIFT_WEBHOOK_TIMEOUT_MS: an attempt the receiver never answers ends after 300 ms', async () => {
    await start({ SIFT_WEBHOOK_TIMEOUT_MS: '300' });
    hook.mode = 'hold';
    const id = await jobWithHook();
    const d = await waitUntil(
      async () => ((await delivery(id))?.last_error ? delivery(id) : undefined),
      'the first attempt to time out',
      4000, // the default would take 10 s
    );
    expect(d).toMatchObject({ state: 'pending', attempts: 1, last_error: { code: 'timeout' } });
  });

  it('SIFT_WEBHOOK_CONCURRENCY: of three due deliveries two are sent at once, the third when one ends', async () => {
    await start({
      SIFT_WEBHOOK_CONCURRENCY: '2',
      SIFT_WEBHOOK_RETRY_S: '10',
      SIFT_WEBHOOK_TIMEOUT_MS: '1000',
    });
    const ids = [await jobWithHook(), await jobWithHook(), await jobWithHook()];
    // Each first attempt fails; the clock stands still, so all three come due again together.
    for (const id of ids)
      await waitUntil(async () => ((await delivery(id))?.attempts === 1 ? true : undefined), id);
    hook.mode = 'hold';
    clock.t += 11_000;
    await waitUntil(
      () => (hook.arrivals.filter((a) => a.mode === 'hold').length === 3 ? true : undefined),
      'three',
    );
    const [a, b, c] = hook.arrivals.filter((x) => x.mode === 'hold').map((x) => x.at);
    expect(b - a).toBeLessThan(500);
    // The third waits for a slot: one of the first two timing out after 1 s.
    expect(c - a).toBeGreaterThanOrEqual(800);
  });
});
