import type { INestApplication } from '@nestjs/common';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as zlib from 'node:zlib';
import request from 'supertest';
import { createTestApp, tableResolver, tmpDbPath, waitForJob, fleet } from '../support/app';
import { Fixture, html, send, type Handler } from '../support/fixture';

/**
 * The SPEC's bound is 50 ms (no request holds the event loop longer). Here jest, the fixture
 * servers, the extraction workers and the /healthz polling share the process and both cores are
 * often busy with other suites: a garbage collection or a lost time slice of the whole process
 * shows up as a delay too. 200 ms keeps a fourfold margin for that, and is still well under what
 * a held loop showed: seconds for the globs below, and for a sitemap's 50 MiB read at once.
 */
const MAX_LOOP_DELAY_MS = 200;
/**
 * What the process may grow by while it reads the bomb: its 2 MB body as fetched and copied, a
 * 64 KiB chunk inflated, decoded and tokenized at a time, and the young generation's garbage from
 * all that and the /healthz polling (V8 keeps up to 32 MB of semi-spaces here). Measured at 14 to
 * 26 MB alone, 73 MB once inside the whole suite (garbage collected later under load); reading
 * the capped 50 MiB at once (a Buffer, its string, the chunks) grew it by 240 MB.
 */
const MAX_BOMB_RSS_MB = 128;
/** A caller of sift waits at most this for /healthz, whatever else runs. */
const MAX_HEALTHZ_MS = 1000;

/**
 * Twenty include globs that each passed the old shape check (two floating wildcards), and paths
 * of 2,000 characters they almost match: picomatch backtracked about 100 ms per path over them.
 */
const GLOBS = Array.from({ length: 20 }, (_, i) => `/*a*z${i}`);
const longPath = (end: string) => `/${'a'.repeat(1990)}${end}`;
/** Out of scope, and costly to tell so by backtracking; then three in scope. */
const MISSES = Array.from({ length: 100 }, (_, i) => longPath(`b${i}`));
const HITS = [longPath('z3'), longPath('z7'), longPath('z12')];

const urlset = (urls: string[]) =>
  `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls
    .map((u) => `<url><loc>${u}</loc></url>`)
    .join('\n')}</urlset>`;

/**
 * 1 GiB of sitemap in about 2 MB of gzip: a first line with a URL, then gzip members of 1 MiB of
 * lines of junk each. Read all at once, the 50 MiB the byte cap lets through were a Buffer, a
 * string and 3.3 million lines tried as URLs in a handful of long tasks.
 */
function gzipBomb(first: string): Buffer {
  const member = zlib.gzipSync(Buffer.alloc(1024 * 1024, 'not-a-url-line\n'));
  return Buffer.concat([zlib.gzipSync(`${first}\n`), ...Array.from({ length: 1024 }, () => member)]);
}

interface Watched<T> {
  value: T;
  /** The slowest of the /healthz calls made one after another while the work ran. */
  healthzMs: number;
  healthzCalls: number;
  /** The event loop's longest delay in this process (the app runs in it) while the work ran. */
  loopMs: number;
  /** The process's resident memory at its highest while the work ran, less before it. */
  rssGrowthMb: number;
}

async function watch<T>(app: INestApplication, work: () => Promise<T>): Promise<Watched<T>> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 10);
  loop.enable();
  let settled = false;
  // A supertest request is a thenable, not a promise: it leaves when first awaited.
  const running = Promise.resolve()
    .then(work)
    .finally(() => (settled = true));
  let healthzMs = 0;
  let healthzCalls = 0;
  try {
    while (!settled) {
      const t = performance.now();
      const r = await request(app.getHttpServer()).get('/healthz');
      healthzMs = Math.max(healthzMs, performance.now() - t);
      healthzCalls++;
      expect(r.status).toBe(200);
    }
    const value = await running;
    return {
      value,
      healthzMs,
      healthzCalls,
      loopMs: loop.max / 1e6,
      rssGrowthMb: (Math.max(rssPeak, process.memoryUsage().rss) - rssBefore) / 2 ** 20,
    };
  } finally {
    loop.disable();
    clearInterval(sampler);
  }
}

/** SPEC "The main thread stays free": crawl and map scopes and sitemaps under a hostile caller. */
describe('the main thread stays free', () => {
  let app: INestApplication;
  const sites: Fixture[] = [];
  const site = async (routes: ConstructorParameters<typeof Fixture>[0]) => {
    const fx = await new Fixture(routes).start('127.0.0.3');
    sites.push(fx);
    return fx;
  };
  /** A handler whose body is made per request from the fixture's origin (known once it listens). */
  const withOrigin =
    (type: string, body: (origin: string) => string | Buffer): Handler =>
    (req, res) =>
      send(200, type, body(`http://${req.headers.host}`))(req, res);
  const sitemapOf = (paths: string[]) =>
    withOrigin('application/xml', (origin) => urlset(paths.map((p) => `${origin}${p}`)));

  const page = send(200, 'text/html', html('<article><h1>A page</h1><p>Words enough.</p></article>'));

  beforeAll(async () => {
    // One extraction worker: in jest it loads sift's TypeScript when the app starts, seconds of
    // both cores, and the page fetched below waits until it is ready.
    ({ app } = await createTestApp(
      { SIFT_DB: tmpDbPath(), SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_EXTRACT_WORKERS: '1' },
      { resolver: tableResolver({ localhost: ['127.0.0.1'] }) },
    ));
    // Listening once: supertest would otherwise open and close a server for every request.
    await app.listen(0, '127.0.0.1');
    // A small map and a page first: what runs once per process (modules ts-jest compiles on first
    // use, the first request through each layer) is not what the tests measure.
    const warm = await site({ '/sitemap.xml': sitemapOf(['/a', '/b']), '/a': page });
    const http = () => request(app.getHttpServer());
    const map = await http()
      .post('/v1/map')
      .set(fleet)
      .send({ url: warm.url('/'), sitemap: 'only', include_paths: ['/*'] });
    expect(map.status).toBe(200);
    expect(
      (
        await http()
          .post('/v1/fetch')
          .set(fleet)
          .send({ url: warm.url('/a') })
      ).status,
    ).toBe(200);
  });
  afterAll(async () => {
    await app.close();
    for (const fx of sites) await fx.stop();
  });

  it('/v1/map: 20 globs over a sitemap of 2,000-character paths', async () => {
    const fx = await site({ '/sitemap.xml': sitemapOf([...MISSES, ...HITS]) });
    const w = await watch(app, () =>
      request(app.getHttpServer())
        .post('/v1/map')
        .set(fleet)
        .send({ url: fx.url('/'), sitemap: 'only', include_paths: GLOBS }),
    );
    expect(w.value.status).toBe(200);
    expect(w.value.body.links.map((l: { url: string }) => l.url)).toEqual(HITS.map((p) => fx.url(p)));
    expect(w.healthzCalls).toBeGreaterThan(0);
    expect(w.healthzMs).toBeLessThan(MAX_HEALTHZ_MS);
    expect(w.loopMs).toBeLessThan(MAX_LOOP_DELAY_MS);
  }, 120_000);

  it('/v1/map: path regexes as costly as their cap allows, over the same sitemap', async () => {
    // Firecrawl's includePaths are these: 108 of the 128 instructions a request may have, the
    // second pattern (counted repeats, never matching) the costliest kind measured.
    const include_regex = ['z(3|7|12)$', `${'a.{0,9}'.repeat(5)}q`];
    const fx = await site({ '/sitemap.xml': sitemapOf([...MISSES, ...HITS]) });
    const w = await watch(app, () =>
      request(app.getHttpServer())
        .post('/v1/map')
        .set(fleet)
        .send({ url: fx.url('/'), sitemap: 'only', include_regex }),
    );
    expect(w.value.status).toBe(200);
    expect(w.value.body.links.map((l: { url: string }) => l.url)).toEqual(HITS.map((p) => fx.url(p)));
    expect(w.healthzMs).toBeLessThan(MAX_HEALTHZ_MS);
    expect(w.loopMs).toBeLessThan(MAX_LOOP_DELAY_MS);
  }, 120_000);

  it("/v1/crawl: the same globs over the seed's links and its sitemap's entries", async () => {
    const links = [...MISSES.slice(0, 50), HITS[0]].map((p) => `<a href="${p}">a page</a>`).join(' ');
    const fx = await site({
      '/': send(200, 'text/html', html(`<article><h1>Home</h1><p>Words enough. ${links}</p></article>`)),
      '/sitemap.xml': sitemapOf([...MISSES.slice(50), HITS[1], HITS[2]]),
      '/a*': page,
    });
    const w = await watch(app, async () => {
      const sub = await request(app.getHttpServer())
        .post('/v1/crawl')
        .set(fleet)
        .send({ url: fx.url('/'), limit: 10, include_paths: GLOBS });
      expect(sub.status).toBe(202);
      return waitForJob(app, sub.body.id);
    });
    expect(w.value).toMatchObject({ status: 'done', targets_total: 4, targets_failed: 0 });
    // The seed and the three pages in scope, each fetched; none of the hundred others.
    for (const p of HITS) expect(fx.hitCount(p)).toBe(1);
    expect(MISSES.filter((p) => fx.hitCount(p) > 0)).toEqual([]);
    expect(w.healthzMs).toBeLessThan(MAX_HEALTHZ_MS);
    expect(w.loopMs).toBeLessThan(MAX_LOOP_DELAY_MS);
  }, 120_000);

  it('a 2 MB gzip sitemap of 1 GiB: read as a stream, in slices, to the 50 MiB cap', async () => {
    const fx = await site({
      '/robots.txt': withOrigin('text/plain', (origin) => `User-agent: *\nSitemap: ${origin}/bomb.xml.gz\n`),
      '/bomb.xml.gz': withOrigin('application/gzip', (origin) => gzipBomb(`${origin}/first`)),
    });
    const w = await watch(app, () =>
      request(app.getHttpServer())
        .post('/v1/map')
        .set(fleet)
        .send({ url: fx.url('/'), sitemap: 'only' }),
    );
    expect(w.value.status).toBe(200);
    expect(w.value.body.links).toEqual([{ url: fx.url('/first'), title: null, source: 'sitemap' }]);
    expect(w.healthzMs).toBeLessThan(MAX_HEALTHZ_MS);
    expect(w.loopMs).toBeLessThan(MAX_LOOP_DELAY_MS);
    expect(w.rssGrowthMb).toBeLessThan(MAX_BOMB_RSS_MB);
  }, 120_000);
});
