import type { INestApplication } from '@nestjs/common';
import * as http from 'node:http';
import request from 'supertest';
import { createTestApp, tableResolver, tmpDbPath, waitForJob, fleet, restricted } from '../support/app';
import { startCrawlSite, resolverTable, TRAPS, type CrawlSite } from '../support/crawl-site';
import { Fixture, html, redirect, send } from '../support/fixture';
import { Receiver, newSecret } from '../support/receiver';
import { idle, waitUntil } from '../support/wait';

interface Result {
  idx: number;
  url: string;
  status: string;
  depth: number;
  parent_idx: number | null;
  duplicate_of: number | null;
  error: { code: string } | null;
}

/** Every result of a job, page after page. */
async function resultsOf(app: INestApplication, id: string, headers = fleet): Promise<Result[]> {
  const out: Result[] = [];
  let after: string | undefined;
  for (;;) {
    const r = await request(app.getHttpServer())
      .get(`/v1/batch/${id}/results`)
      .query({ limit: 1000, ...(after ? { after } : {}) })
      .set(headers);
    expect(r.status).toBe(200);
    out.push(...(r.body.results as Result[]));
    if (!r.body.next) return out;
    after = String(r.body.next);
  }
}

async function eventsOf(
  app: INestApplication,
  id: string,
): Promise<{ seq: number; type: string; data: any }[]> {
  const out: { seq: number; type: string; data: any }[] = [];
  let after = 0;
  for (;;) {
    const r = await request(app.getHttpServer())
      .get(`/v1/batch/${id}/events`)
      .query({ after, limit: 1000 })
      .set(fleet);
    out.push(...r.body.events);
    if (r.body.next === null || r.body.next === undefined) return out;
    after = Number(r.body.next);
  }
}

/** The site's pages requested (robots.txt and sitemaps aside), with how many times. */
function pageHits(site: CrawlSite): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, n] of site.hits) {
    if (k === '/robots.txt' || k === '/llms.txt' || k.includes('sitemap')) continue;
    out.set(k, n);
  }
  return out;
}

describe('crawl (a 500-page site on 127.0.0.1)', () => {
  let app: INestApplication;
  let site: CrawlSite;
  const http_ = () => request(app.getHttpServer());
  const crawl = (body: object, headers = fleet) => http_().post('/v1/crawl').set(headers).send(body);

  beforeAll(async () => {
    site = await startCrawlSite({ pages: 500, hostName: 'site.test' });
    ({ app } = await createTestApp(
      { SIFT_DB: tmpDbPath(), SIFT_FLEET_ALLOW: '127.0.0.0/8' },
      { resolver: tableResolver({ ...resolverTable(site), localhost: ['127.0.0.1'] }) },
    ));
  });
  afterAll(async () => {
    await app.close();
    await site.close();
  });

  it('finds exactly the expected pages, each fetched once, depths and duplicates right, robots.txt obeyed', async () => {
    site.reset();
    const sub = await crawl({ url: `${site.origin}/`, limit: 1000, max_depth: 6 });
    expect(sub.status).toBe(202);
    expect(sub.body).toMatchObject({ kind: 'crawl', seed: `${site.origin}/`, limit: 1000, targets_total: 1 });
    expect(sub.headers.location).toBe(`/v1/batch/${sub.body.id}`);
    const job = await waitForJob(app, sub.body.id);
    expect(job.status).toBe('done');
    const results = await resultsOf(app, sub.body.id);
    const expected = site.expected({ maxDepth: 6, sitemap: 'include' });
    const keys = results.map((r) => site.keyOf(r.url));
    expect(new Set(keys)).toEqual(expected);
    expect(keys.length).toBe(expected.size); // each page once
    expect(job.targets_total).toBe(expected.size);
    // Each page requested once; a redirect's target once more through the redirect.
    const hits = pageHits(site);
    for (const [k, n] of hits) expect([k, n]).toEqual([k, site.redirectTargets.has(k) ? Math.min(n, 2) : 1]);
    expect([...hits.keys()].sort()).toEqual([...expected].filter((k) => !k.startsWith('127.0.0.2')).sort());
    for (const p of TRAPS.private) expect(site.hits.get(p)).toBeUndefined();
    expect(site.hits.get('/robots.txt')).toBe(1);
    // Depth: link hops (a sitemap's entry is one hop from the seed); the parent is one hop up.
    const byIdx = new Map(results.map((r) => [r.idx, r]));
    for (const r of results) {
      const d = site.depthOf(site.keyOf(r.url));
      if (r.parent_idx === null) expect(r.idx === 0 ? 0 : 1).toBe(r.depth);
      else {
        expect(byIdx.get(r.parent_idx)!.depth).toBe(r.depth - 1);
        expect(r.depth).toBe(d);
      }
      expect(r.depth).toBeLessThanOrEqual(6);
    }
    expect(results.find((r) => site.keyOf(r.url) === TRAPS.deep)!.depth).toBe(6);
    // The redirect into /p/7 and the second of two equal pages are duplicates, with no result of their own.
    const at = (k: string) => results.find((r) => site.keyOf(r.url) === k)!;
    expect(at(TRAPS.redirect)).toMatchObject({
      status: 'done',
      duplicate_of: at(TRAPS.variants).idx,
      result: null,
    });
    const [a, b] = TRAPS.copies.map(at);
    const [first, second] = a.idx < b.idx ? [a, b] : [b, a];
    expect(second.duplicate_of === first.idx || first.duplicate_of === second.idx).toBe(true);
    expect(results.filter((r) => r.duplicate_of !== null)).toHaveLength(2);
    // Events: gapless, one crawl.page per target, the added counts summing to the targets after the seed.
    const events = await eventsOf(app, sub.body.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const pages = events.filter((e) => e.type === 'crawl.page');
    expect(pages.map((e) => e.data.idx).sort((x, y) => x - y)).toEqual(results.map((r) => r.idx));
    expect(pages.reduce((n, e) => n + e.data.added, 0)).toBe(results.length - 1);
    expect(events[events.length - 1].type).toBe('batch.done');
  }, 120_000);

  it('never holds more than its limit, for limits from 1 past the site size (pages from the cache)', async () => {
    const all = site.expected({ maxDepth: 3, sitemap: 'include' }).size;
    for (const limit of [1, 2, 3, 10, 99, 100, 101, all - 1, all, all + 1, 600]) {
      const sub = await crawl({ url: `${site.origin}/`, limit, max_depth: 3 });
      const job = await waitForJob(app, sub.body.id);
      const results = await resultsOf(app, sub.body.id);
      expect([limit, job.targets_total, results.length]).toEqual([
        limit,
        Math.min(limit, all),
        Math.min(limit, all),
      ]);
      expect(new Set(results.map((r) => site.keyOf(r.url))).size).toBe(results.length);
    }
    // Every limit, on a small site of its own.
    const small = await startCrawlSite({ pages: 40, seed: 3 });
    try {
      const size = small.expected({ maxDepth: 3, sitemap: 'include' }).size;
      for (let limit = 1; limit <= size + 3; limit++) {
        const sub = await crawl({ url: `${small.origin}/`, limit, max_depth: 3 });
        const job = await waitForJob(app, sub.body.id);
        expect([limit, job.status, job.targets_total]).toEqual([limit, 'done', Math.min(limit, size)]);
      }
    } finally {
      await small.close();
    }
  }, 240_000);

  it('sitemap only: the seed and the sitemaps in scope; skip: no sitemap is read', async () => {
    site.reset();
    const only = await crawl({ url: `${site.origin}/`, limit: 1000, max_depth: 6, sitemap: 'only' });
    await waitForJob(app, only.body.id);
    const keys = new Set((await resultsOf(app, only.body.id)).map((r) => site.keyOf(r.url)));
    expect(keys).toEqual(site.expected({ maxDepth: 6, sitemap: 'only' }));
    expect(keys.has(TRAPS.orphan)).toBe(true);
    site.reset();
    const skip = await crawl({ url: `${site.origin}/`, limit: 1000, max_depth: 2, sitemap: 'skip' });
    await waitForJob(app, skip.body.id);
    const skipped = new Set((await resultsOf(app, skip.body.id)).map((r) => site.keyOf(r.url)));
    expect(skipped).toEqual(site.expected({ maxDepth: 2, sitemap: 'skip' }));
    expect([...site.hits.keys()].filter((k) => k.includes('sitemap'))).toEqual([]);
  }, 120_000);

  it('include_paths and exclude_paths hold the links to their globs; subdomains only when allowed', async () => {
    const sub = await crawl({
      url: `${site.origin}/`,
      limit: 1000,
      max_depth: 6,
      include_paths: ['/deep/**', '/p/*'],
      exclude_paths: ['/p/1*'],
      allow_subdomains: true,
    });
    await waitForJob(app, sub.body.id);
    const keys = (await resultsOf(app, sub.body.id)).map((r) => site.keyOf(r.url));
    expect(keys[0]).toBe('/');
    expect(keys.slice(1).filter((k) => !/^\/(deep\/\d+|p\/[02-9]\d*)$/.test(k))).toEqual([]);
    expect(keys).toContain(TRAPS.deep);
  }, 120_000);

  it('path_prefix holds the links under it, beside the globs', async () => {
    const under = await crawl({
      url: `${site.origin}/`,
      limit: 1000,
      max_depth: 6,
      path_prefix: '/p/',
      exclude_paths: ['/p/1*'],
    });
    await waitForJob(app, under.body.id);
    const keys = (await resultsOf(app, under.body.id)).map((r) => site.keyOf(r.url));
    expect(keys[0]).toBe('/');
    expect(keys.length).toBeGreaterThan(10);
    expect(keys.slice(1).filter((k) => !/^\/p\/[02-9]\d*$/.test(k))).toEqual([]);
  }, 120_000);

  it('a cancelled crawl stops its fetches at once and adds nothing after', async () => {
    const slow = await startCrawlSite({ pages: 200, crawlDelayS: 1, seed: 7 });
    try {
      const sub = await crawl({ url: `${slow.origin}/`, limit: 1000, max_depth: 6, sitemap: 'skip' });
      await waitUntil(
        async () =>
          (await eventsOf(app, sub.body.id)).filter((e) => e.type === 'crawl.page').length >= 3 || undefined,
        () => 'three pages of the slow crawl',
        60_000,
      );
      const cancel = await http_().delete(`/v1/batch/${sub.body.id}`).set(fleet);
      expect(cancel.status).toBe(200);
      const atCancel = [...pageHits(slow).values()].reduce((n, x) => n + x, 0);
      const job = await waitForJob(app, sub.body.id);
      expect(job.status).toBe('cancelled');
      // Two and a half turns of its Crawl-delay: a crawl that went on would ask for pages in them.
      await idle(2500, 'a window in which a page asked for late would show');
      expect([...pageHits(slow).values()].reduce((n, x) => n + x, 0)).toBe(atCancel);
      const after = (await http_().get(`/v1/batch/${sub.body.id}`).set(fleet)).body;
      expect(after.targets_total).toBe(job.targets_total);
      const events = await eventsOf(app, sub.body.id);
      expect(events[events.length - 1].type).toBe('batch.cancelled');
      // Its robots.txt's Crawl-delay of 1 s spaced the pages it asked for (robots.txt and llms.txt
      // are the site's files, read as its sitemaps are).
      const times = slow.log
        .filter((l) => l.path !== '/robots.txt' && l.path !== '/llms.txt')
        .map((l) => l.at);
      expect(times.length).toBeGreaterThanOrEqual(3);
      for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(950);
    } finally {
      await slow.close();
    }
  }, 120_000);

  it('ignore_query: URLs that differ only in their query are one page', async () => {
    const words = 'word '.repeat(80);
    const list = (n: number) =>
      send(
        200,
        'text/html',
        html(
          `<a href="/list?page=${n + 1}">next</a> <a href="/list?sort=new&page=${n}">sorted</a><p>${words} ${n}</p>`,
        ),
      );
    const fx = await new Fixture({
      '/list': (q, r) => list(Number(new URL(q.url!, 'http://x').searchParams.get('page') ?? 1))(q, r),
    }).start();
    try {
      const asked = await crawl({ url: fx.url('/list?page=1'), max_depth: 3, sitemap: 'skip' });
      await waitForJob(app, asked.body.id);
      expect((await resultsOf(app, asked.body.id)).map((r) => new URL(r.url).search)).toEqual([
        '?page=1',
        '?page=2',
        '?sort=new&page=1',
        '?page=3',
        '?sort=new&page=2',
        '?page=4',
        '?sort=new&page=3',
      ]);
      const once = await crawl({
        url: fx.url('/list?page=1'),
        max_depth: 3,
        sitemap: 'skip',
        ignore_query: true,
      });
      await waitForJob(app, once.body.id);
      expect((await resultsOf(app, once.body.id)).map((r) => new URL(r.url).search)).toEqual(['?page=1']);
    } finally {
      await fx.stop();
    }
  });

  it('a webhook that names crawl.page gets each page, then the end', async () => {
    const secret = newSecret();
    const hook = await new Receiver(secret).start();
    try {
      const sub = await crawl({
        url: `${site.origin}/`,
        limit: 5,
        webhook: { url: hook.url, secret, events: ['crawl.page', 'batch.done'] },
      });
      await waitForJob(app, sub.body.id);
      await waitUntil(() => (hook.unique().length >= 6 ? true : undefined), 'six deliveries');
      const got = hook.unique().map((r) => r.payload);
      expect(got.map((p) => p.type)).toEqual([...Array(5).fill('crawl.page'), 'batch.done']);
      expect(
        got
          .slice(0, 5)
          .map((p) => (p.data as { idx: number }).idx)
          .sort(),
      ).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await hook.stop();
    }
  });

  it('answers 400 for what it cannot crawl, naming the field', async () => {
    const url = `${site.origin}/`;
    const cases: [object, RegExp][] = [
      [{ url: 'ftp://x/' }, /url/],
      [{ url, limit: 20_000 }, /limit 20000 is over the 10000/],
      [{ url, max_depth: 21 }, /max_depth/],
      [{ url, sitemap: 'sometimes' }, /sitemap/],
      [{ url, include_paths: ['docs'] }, /include_paths\.0/],
      [{ url, exclude_paths: Array.from({ length: 21 }, (_, i) => `/x${i}`) }, /exclude_paths/],
      [{ url, allow_external: 'yes' }, /allow_external/],
      [{ url, path_prefix: 'docs/' }, /path_prefix must start with/],
    ];
    for (const [body, message] of cases) {
      const r = await crawl(body);
      expect([r.status, r.body.error.code]).toEqual([400, 'invalid_request']);
      expect(r.body.error.message).toMatch(message);
      expect(r.body.error.hint).toBeTruthy();
    }
    const limit = await crawl({ url, limit: 1001 }, restricted);
    expect([limit.status, limit.body.error.message]).toEqual([
      400,
      expect.stringMatching(/1000 pages a restricted/),
    ]);
    const headers = await crawl({ url, options: { headers: { 'x-a': 'b' } } }, restricted);
    expect(headers.status).toBe(403);
  });

  it('an Idempotency-Key returns the crawl it made', async () => {
    const body = { url: `${site.origin}/`, limit: 3 };
    const one = await crawl(body).set('Idempotency-Key', 'crawl-key-1');
    const two = await crawl(body).set('Idempotency-Key', 'crawl-key-1');
    expect([one.status, two.status, two.body.id, two.headers['idempotent-replayed']]).toEqual([
      202,
      200,
      one.body.id,
      'true',
    ]);
    const other = await crawl({ ...body, limit: 4 }).set('Idempotency-Key', 'crawl-key-1');
    expect(other.status).toBe(409);
    await waitForJob(app, one.body.id);
  });

  it('map: the seed page links and the sitemaps, in scope, allowed by robots.txt, each canonical URL once', async () => {
    const r = await http_()
      .post('/v1/map')
      .set(fleet)
      .send({ url: `${site.origin}/` });
    expect(r.status).toBe(200);
    const links = r.body.links as { url: string; title: string | null; source: string }[];
    const keys = links.map((l) => site.keyOf(l.url));
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain(TRAPS.orphan);
    expect(links.find((l) => site.keyOf(l.url) === TRAPS.orphan)!.source).toBe('sitemap');
    for (const p of TRAPS.private) expect(keys).not.toContain(p);
    expect(keys.filter((k) => k === TRAPS.variants)).toHaveLength(1);
    expect(links.filter((l) => l.source === 'page').length).toBeGreaterThan(5);
    expect(links.some((l) => l.source === 'page' && l.title)).toBe(true);
    const few = await http_()
      .post('/v1/map')
      .set(fleet)
      .send({ url: `${site.origin}/`, limit: 3 });
    expect(few.body.links).toHaveLength(3);
    const over = await http_()
      .post('/v1/map')
      .set(fleet)
      .send({ url: `${site.origin}/`, limit: 30_001 });
    expect(over.status).toBe(400);
  });
});

describe('crawl: the address policy holds through links, redirects and sitemap entries', () => {
  it('a crawl never reaches an address its caller may not, however the site points there', async () => {
    // The secret server is on 127.0.0.3; the fleet caller here may reach 127.0.0.2 only, as a
    // restricted caller may reach public addresses only: the one policy, per class.
    let secretHits = 0;
    const secret = http.createServer((_q, s) => {
      secretHits++;
      s.end('secret');
    });
    await new Promise<void>((r) => secret.listen(0, '127.0.0.3', r));
    const port = (secret.address() as { port: number }).port;
    const inside = `http://127.0.0.3:${port}`;
    const words = 'word '.repeat(80);
    const fx = await new Fixture({
      '/': send(
        200,
        'text/html',
        html(
          `<a href="${inside}/link">in</a> <a href="/hop">hop</a> <a href="http://inside.test:${port}/byname">n</a><p>${words}</p>`,
        ),
      ),
      '/hop': redirect(`${inside}/redirected`, 302),
      '/robots.txt': send(200, 'text/plain', `User-agent: *\nAllow: /\nSitemap: ${inside}/sitemap.xml\n`),
      '/sitemap.xml': send(
        200,
        'application/xml',
        `<urlset><url><loc>${inside}/entry</loc></url><url><loc>http://inside.test:${port}/entry2</loc></url></urlset>`,
      ),
    }).start('127.0.0.2');
    const { app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.2/32' },
      { resolver: tableResolver({ 'inside.test': ['127.0.0.3'] }) },
    );
    try {
      const sub = await request(app.getHttpServer())
        .post('/v1/crawl')
        .set(fleet)
        .send({ url: fx.url('/'), allow_external: true, max_depth: 3 });
      const job = await waitForJob(app, sub.body.id);
      const results = await resultsOf(app, sub.body.id);
      expect(job.status).toBe('partial');
      for (const r of results.filter(
        (x) => x.url.includes('127.0.0.3') || x.url.includes('inside.test') || x.url.endsWith('/hop'),
      )) {
        expect([r.url, r.status, r.error?.code]).toEqual([r.url, 'failed', 'blocked_address']);
      }
      expect(results.length).toBeGreaterThanOrEqual(4);
      const map = await request(app.getHttpServer())
        .post('/v1/map')
        .set(fleet)
        .send({ url: fx.url('/') });
      expect(map.status).toBe(200);
      // A restricted caller: its seed on a loopback address is refused before anything is asked.
      const before = fx.hitCount('/');
      const r = await request(app.getHttpServer())
        .post('/v1/crawl')
        .set(restricted)
        .send({ url: fx.url('/') });
      const rj = await waitForJob(app, r.body.id, restricted);
      expect(rj.status).toBe('failed');
      const rr = await resultsOf(app, r.body.id, restricted);
      expect(rr.map((x) => x.error?.code)).toEqual(['blocked_address']);
      expect(fx.hitCount('/')).toBe(before);
      expect(secretHits).toBe(0);
    } finally {
      await app.close();
      await fx.stop();
      secret.close();
    }
  }, 60_000);
});
