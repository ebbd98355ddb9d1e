import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { HostStore } from '../../src/dcache';
import { HostSlots } from '../../src/fetch/host-slots';
import { createTestApp, tmpDbPath, waitForJob, waitUntil, fleet, restricted } from '../support/app';
import { Fixture, html, redirect, send, type Handler } from '../support/fixture';

const page = (req: Parameters<Handler>[0], res: Parameters<Handler>[1]) =>
  send(
    200,
    'text/html',
    html(`<article><p>The page at ${req.url} has words enough.</p></article>`),
  )(req, res);

/** A site of its own (its own origin) whose /robots.txt is `robots`, every other path a page. */
async function site(robots: Handler | undefined, extra: Record<string, Handler> = {}): Promise<Fixture> {
  return new Fixture({ ...(robots ? { '/robots.txt': robots } : {}), ...extra, '/*': page }).start();
}
const text = (body: string) => send(200, 'text/plain', body);

describe('robots.txt (RFC 9309)', () => {
  let app: INestApplication;
  let db: string;
  const sites: Fixture[] = [];
  const http = () => request(app.getHttpServer());
  const fetchUrl = (url: string, headers = fleet, extra: object = {}) =>
    http()
      .post('/v1/fetch')
      .set(headers)
      .send({ url, max_age_s: 0, ...extra });
  const newSite = async (robots: Handler | undefined, extra: Record<string, Handler> = {}) => {
    const s = await site(robots, extra);
    sites.push(s);
    return s;
  };

  beforeAll(async () => {
    db = tmpDbPath();
    ({ app } = await createTestApp({ SIFT_DB: db, SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });
  afterAll(async () => {
    await app.close();
    for (const s of sites) await s.stop();
  });

  /** Each case: a robots.txt, then paths with whether sift may fetch them. */
  const cases: [string, Handler | undefined, [string, boolean][]][] = [
    [
      'disallow',
      text('User-agent: *\nDisallow: /private\n'),
      [
        ['/private/x', false],
        ['/public', true],
      ],
    ],
    [
      'an Allow overrides a shorter Disallow; on a tie, Allow wins',
      text('User-agent: *\nDisallow: /docs\nAllow: /docs/public\nDisallow: /tie\nAllow: /tie\n'),
      [
        ['/docs/x', false],
        ['/docs/public/a', true],
        ['/tie/a', true],
      ],
    ],
    [
      '$ and * patterns',
      text('User-agent: *\nDisallow: /*.pdf$\nDisallow: /a*/b\n'),
      [
        ['/file.pdf', false],
        ['/file.pdf?x=1', true],
        ['/file.pdfx', true],
        ['/abc/b', false],
        ['/b', true],
      ],
    ],
    [
      "the product token's group replaces the * group",
      text('User-agent: *\nDisallow: /\n\nUser-agent: sift\nDisallow: /nosift\n'),
      [
        ['/nosift', false],
        ['/other', true],
      ],
    ],
    ['a 404 robots.txt allows everything', undefined, [['/anything', true]]],
    ['a 500 robots.txt disallows everything', send(500, 'text/plain', 'down'), [['/anything', false]]],
    [
      'a redirected robots.txt is followed',
      redirect('/real-robots.txt', 301),
      [
        ['/secret', false],
        ['/open', true],
      ],
    ],
    [
      'a 2 MB robots.txt: the first 500 KiB count, the rest is ignored',
      text(
        `User-agent: *\nDisallow: /early\n${'# padding line of a very long robots file\n'.repeat(50_000)}Disallow: /late\n`,
      ),
      [
        ['/early', false],
        ['/late', true],
      ],
    ],
  ];

  // The robots.txt a redirect leads to (read by the redirect case only).
  const extra = { '/real-robots.txt': text('User-agent: *\nDisallow: /secret\n') };

  it.each(cases)('%s', async (_name, robots, expected) => {
    const s = await newSite(robots, extra);
    for (const [path, allowed] of expected) {
      const r = await fetchUrl(s.url(path));
      if (allowed) {
        expect([path, r.status]).toEqual([path, 200]);
        expect(s.hitCount(path.split('?')[0])).toBeGreaterThan(0);
      } else {
        expect([path, r.status, r.body.error?.code]).toEqual([path, 403, 'robots_denied']);
        expect(s.hitCount(path.split('?')[0])).toBe(0);
      }
    }
    expect(s.hitCount('/robots.txt')).toBe(1); // once per origin
  });

  it('a denial quotes the rule and its line', async () => {
    const s = await newSite(text('User-agent: *\nAllow: /\nDisallow: /private\n'));
    const r = await fetchUrl(s.url('/private/x?y=1'));
    expect(r.body.error.message).toBe(
      `${s.url('')}/robots.txt disallows /private/x?y=1 for sift: line 3 "Disallow: /private"`,
    );
  });

  it('an unreachable robots.txt: the site is not fetched, with the reason', async () => {
    const s = await newSite((req) => req.socket.destroy());
    const r = await fetchUrl(s.url('/page'));
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('connect_error');
    expect(r.body.error.message).toContain('/robots.txt');
    expect(s.hitCount('/page')).toBe(0);
  });

  it('robots: false is for fleet callers; a restricted one gets 403 forbidden, in a fetch and a batch', async () => {
    const s = await newSite(text('User-agent: *\nDisallow: /\n'));
    expect((await fetchUrl(s.url('/x'), fleet, { robots: false })).status).toBe(200);
    const r = await fetchUrl(s.url('/x'), restricted, { robots: false });
    expect([r.status, r.body.error.code]).toEqual([403, 'forbidden']);
    const b = await http()
      .post('/v1/batch')
      .set(restricted)
      .send({ targets: [{ url: 'https://example.com/', options: { robots: false } }] });
    expect([b.status, b.body.error.code]).toEqual([403, 'forbidden']);
  });

  it('a 500-target job asks robots.txt once; disallowed targets fail robots_denied; another app on the database asks none', async () => {
    const s = await newSite(text('User-agent: *\nDisallow: /private\n'));
    const targets = Array.from({ length: 500 }, (_, i) => ({
      url: s.url(i % 5 === 0 ? `/private/${i}` : `/p/${i}`),
    }));
    const sub = await http().post('/v1/batch').set(fleet).send({ targets });
    const job = await waitForJob(app, sub.body.id);
    expect(job).toMatchObject({ status: 'partial', targets_done: 500, targets_failed: 100 });
    const results = (await http().get(`/v1/batch/${sub.body.id}/results?limit=1000`).set(fleet)).body.results;
    expect(results[0].error).toMatchObject({ code: 'robots_denied' });
    expect(results[1].status).toBe('done');
    expect(s.hitCount('/robots.txt')).toBe(1);
    // A second instance on the same database reads it from there.
    const { app: other } = await createTestApp({ SIFT_DB: db, SIFT_FLEET_ALLOW: '127.0.0.0/8' });
    try {
      const r = await request(other.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: s.url('/private/again'), max_age_s: 0 });
      expect(r.body.error.code).toBe('robots_denied');
      expect(s.hitCount('/robots.txt')).toBe(1);
    } finally {
      await other.close();
    }
    // 500 targets through the whole pipeline: 10-25 s on two busy cores.
  }, 90_000);
});

describe('a host that asks to wait', () => {
  let app: INestApplication;
  const http = () => request(app.getHttpServer());
  afterEach(async () => {
    jest.restoreAllMocks();
    await app.close();
  });

  it('429 Retry-After: 2 for its first 10 requests: a 100-target job ends done, nothing reaches it while paused, /v1/fetch gets host_backoff', async () => {
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_PER_HOST_CONCURRENCY: '4' }));
    const arrivals: number[] = [];
    const refusals: number[] = [];
    const fx = await new Fixture({
      '/p/*': (req, res) => {
        arrivals.push(Date.now());
        if (arrivals.length <= 10) {
          refusals.push(Date.now());
          return send(429, 'text/plain', 'slow down', { 'retry-after': '2' })(req, res);
        }
        page(req, res);
      },
    }).start();
    // Each pause as it is stored: when its write had committed (at the latest) and until when.
    const hosts = app.get(HostStore);
    const pauses: { committed: number; until: number }[] = [];
    const pauseHost = hosts.pauseHost.bind(hosts);
    jest.spyOn(hosts, 'pauseHost').mockImplementation(async (host, until) => {
      await pauseHost(host, until);
      pauses.push({ committed: Date.now(), until });
    });
    try {
      const targets = Array.from({ length: 100 }, (_, i) => ({ url: fx.url(`/p/${i}`) }));
      const sub = await http().post('/v1/batch').set(fleet).send({ targets });
      // Paused for every caller: a fetch of the host meanwhile is answered without asking it.
      await waitUntil(
        async () => ((await hosts.pausedUntil(`127.0.0.1:${fx.port}`)) > Date.now() ? true : undefined),
        'a pause',
      );
      const f = await http()
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/p/direct'), max_age_s: 0 });
      expect([f.status, f.body.error.code]).toEqual([429, 'host_backoff']);
      expect(Number(f.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(fx.hitCount('/p/direct')).toBe(0);

      const job = await waitForJob(app, sub.body.id);
      expect(job).toMatchObject({ status: 'done', targets_done: 100, targets_failed: 0 });
      const results = (await http().get(`/v1/batch/${sub.body.id}/results?limit=1000`).set(fleet)).body
        .results;
      expect(results.every((r: { result: { status: number } }) => r.result.status === 200)).toBe(true);
      expect(refusals).toHaveLength(10);
      expect(pauses.length).toBeGreaterThan(0);
      // What a pause promises: once it is stored, no request checks the host and goes on until it
      // ends. Requests that checked before it was stored may still arrive, however late a loaded
      // machine makes them; each holds one of the host's 4 slots from its check until its answer,
      // so at most 4 of them (the first pause sees the 3 sent beside the first 429). A time margin
      // after each 429 only guesses at that lateness: 50 ms was passed by a request 54 ms late
      // with both cores busy. With the pauses stored nowhere, 7 to 13 requests arrived inside most
      // of these windows.
      const arrivedDuring = pauses.map((p) => ({
        ...p,
        arrived: arrivals.filter((a) => a > p.committed && a < p.until),
      }));
      expect(arrivedDuring.filter((p) => p.arrived.length > 4)).toEqual([]);
    } finally {
      await fx.stop();
    }
  }, 60_000);

  it('Crawl-delay 1: requests from two concurrent jobs are sent at least 1 s apart', async () => {
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
    // Each turn the database hands out: the time (ms) its request may be sent.
    const hosts = app.get(HostStore);
    const slots: number[] = [];
    const takeTurn = hosts.takeTurn.bind(hosts);
    jest.spyOn(hosts, 'takeTurn').mockImplementation(async (host, delayMs, nowMs) => {
      const next = await takeTurn(host, delayMs, nowMs);
      if (next === undefined) slots.push(nowMs);
      return next;
    });
    const arrivals: number[] = [];
    const fx = await new Fixture({
      '/robots.txt': text('User-agent: *\nCrawl-delay: 1\n'),
      '/p/*': (req, res) => {
        arrivals.push(Date.now());
        page(req, res);
      },
    }).start();
    try {
      const job = (prefix: string) =>
        http()
          .post('/v1/batch')
          .set(fleet)
          .send({ targets: Array.from({ length: 3 }, (_, i) => ({ url: fx.url(`/p/${prefix}${i}`) })) });
      const [a, b] = await Promise.all([job('a'), job('b')]);
      await waitForJob(app, a.body.id);
      await waitForJob(app, b.body.id);
      expect(arrivals).toHaveLength(6);
      // What Crawl-delay promises: slots 1,000 ms apart, and no request sent before its slot. It
      // promises nothing of the gap between two arrivals: each request reaches the fixture after a
      // latency of its own, which a loaded machine stretches for one and not the next, so any
      // margin on the gaps is a guess. So: the slots are spaced, and the k-th arrival is no earlier
      // than the k-th slot (2 ms allowed for timers and clocks rounding to whole milliseconds).
      // Unspaced, the six would arrive within a few milliseconds of the first slot.
      slots.sort((x, y) => x - y);
      arrivals.sort((x, y) => x - y);
      expect(slots.length).toBeGreaterThanOrEqual(6);
      const gaps = slots.slice(1).map((t, i) => t - slots[i]);
      expect(gaps.filter((g) => g < 1000)).toEqual([]);
      const early = arrivals
        .map((a, k) => ({ k, arrived: a, slot: slots[k] }))
        .filter((x) => x.arrived < x.slot - 2);
      expect(early).toEqual([]);
    } finally {
      await fx.stop();
    }
  }, 30_000);

  it('/v1/fetch and batch targets share SIFT_PER_HOST_CONCURRENCY', async () => {
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_PER_HOST_CONCURRENCY: '2' }));
    // The direct fetch asking for a slot while both are taken: the batch's per-host claim limit
    // (2) keeps its other targets unclaimed, so the only one asking then is the direct fetch.
    let directSent = false;
    let directWaits = false;
    const acquire = HostSlots.prototype.acquire;
    jest.spyOn(HostSlots.prototype, 'acquire').mockImplementation(function (this: HostSlots, host, signal) {
      if (directSent && this.inFlight(host) >= 2) directWaits = true;
      return acquire.call(this, host, signal);
    });
    const held: (() => void)[] = [];
    let open = 0;
    let most = 0;
    let holding = true;
    const fx = await new Fixture({
      '/hold/*': (req, res) => {
        most = Math.max(most, ++open);
        const answer = () => {
          open--;
          page(req, res);
        };
        if (holding) held.push(answer);
        else setTimeout(answer, 20);
      },
    }).start();
    try {
      const sub = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: Array.from({ length: 4 }, (_, i) => ({ url: fx.url(`/hold/t${i}`) })) });
      await waitUntil(() => held.length === 2 || undefined, 'two targets in flight');
      directSent = true;
      const direct = http()
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/hold/direct'), max_age_s: 0 })
        .then((r) => r);
      await waitUntil(() => directWaits || undefined, 'the direct fetch to wait for a slot of the host');
      expect(fx.hitCount('/hold/direct')).toBe(0);
      // Let go: from now on each request is answered after 20 ms.
      holding = false;
      for (const h of held.splice(0)) h();
      expect((await direct).status).toBe(200);
      expect(await waitForJob(app, sub.body.id)).toMatchObject({ status: 'done' });
      expect(most).toBe(2);
    } finally {
      for (const h of held) h();
      await fx.stop();
    }
  });
});
