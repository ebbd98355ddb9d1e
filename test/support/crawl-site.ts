import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { Fixture, html, send } from './fixture';
import { prng } from './prng';

/**
 * A generated site for crawl tests: every trap a crawler meets, on real HTTP servers.
 *
 * Pages are named by a key: a path on the site's own host ('/p/12'), or host and path elsewhere
 * ('docs.site.test/sub/1' on the subdomain, '127.0.0.2/elsewhere' on the other host). Depths are
 * exact whatever order a crawl fetches in: a page at depth d > 1 is linked only from pages at
 * d - 1, every other link goes back to '/' or a depth-1 page (the cycles), and the sitemaps list
 * depth-1 pages, leaves and the orphan, so a sitemap entry (depth 1) never moves another page's depth.
 */
export interface CrawlSiteOptions {
  /** Pages on the site's host reached by links or the sitemap (at least 40; not /old/7 nor /private/*). */
  pages?: number;
  /** Listening address. */
  host?: string;
  /** A name for the site (e.g. 'site.test'): its pages link by name and `docs.<name>` is a subdomain. */
  hostName?: string;
  /** robots.txt's Crawl-delay, left out when 0. */
  crawlDelayS?: number;
  seed?: number;
}

export interface ExpectedOptions {
  maxDepth: number;
  sitemap: 'include' | 'skip' | 'only';
  allowSubdomains?: boolean;
  allowExternal?: boolean;
}

export interface CrawlSite {
  /** http://<hostName or address>:<port> */
  origin: string;
  port: number;
  /** With a hostName: it and `docs.<hostName>`, each to the listening address. */
  names: Record<string, string[]>;
  /** The other host's origin (http://127.0.0.2:<port>). */
  otherOrigin: string;
  /** Requests per path and query as received ('/p/12'); on the subdomain, host first ('docs.site.test/sub/1'). */
  hits: Map<string, number>;
  /** The other host's requests per path. */
  otherHits: Map<string, number>;
  /** Every request to the site's host and subdomain, in order. */
  log: { path: string; at: number; host: string }[];
  /** Pages a redirect lands on: fetched once by themselves and once through the redirect. */
  redirectTargets: Set<string>;
  /**
   * The keys a correct crawl from '/' fetches with no limit, no path filters and robots.txt obeyed:
   * the seed's links and sitemap entries are depth 1, a page deeper than maxDepth is not fetched
   * (so maxDepth 0 is the seed alone, in every sitemap mode); '/old/7' is fetched and ends a
   * duplicate, both copies are fetched; 'only' follows no link; a subdomain counts with
   * allowSubdomains or allowExternal, the other host with allowExternal. From maxDepth 6 on, that is
   * `pages` + 1 keys with the sitemap included, `pages` with it skipped (the orphan goes).
   */
  expected(o: ExpectedOptions): Set<string>;
  /** Link hops from '/' (no sitemap), undefined for a page no link reaches. */
  depthOf(key: string): number | undefined;
  /** The key of a URL as requested: host first unless it is the site's, path and query kept. */
  keyOf(url: string): string;
  urlOf(key: string): string;
  reset(): void;
  close(): Promise<void>;
}

/** The table for a test's resolver: `tableResolver({ ...resolverTable(site), ... })` (see app.ts). */
export function resolverTable(site: CrawlSite): Record<string, string[]> {
  return { ...site.names };
}

/** The pages each trap uses, by key. */
export const TRAPS = {
  /** Linked as itself, with utm_* parameters, a #section, a trailing slash, an upper-case scheme and host. */
  variants: '/p/7',
  /** A 301 to '/p/7', linked from a depth-1 page. */
  redirect: '/old/7',
  /** Byte-identical pages, title included, both linked. */
  copies: ['/copy/a', '/copy/b'],
  /** Six hops from '/' (/deep/1 … /deep/6). */
  deep: '/deep/6',
  /** Listed in the gzip sitemap, linked from nowhere. */
  orphan: '/orphan/1',
  /** Disallowed by robots.txt: the first two linked, the third in a sitemap; never to be fetched. */
  private: ['/private/1', '/private/2', '/private/3'],
} as const;

type Link = { key: string; href: string };
type Route = { status: number; type?: string; location?: string; body: string | Buffer };

const OTHER = '127.0.0.2';
const FAN = 10;
const HTML = 'text/html; charset=utf-8';
const WORDS = (
  'river lantern copper meadow signal harbor timber orchard velvet granite falcon ember quarry ' +
  'compass thistle beacon mosaic saddle glacier pepper walnut tundra ferry violet anchor cobalt ' +
  'prairie ribbon summit cedar marble willow canyon basil ledger pylon marsh jasper kettle'
).split(' ');

export async function startCrawlSite(o: CrawlSiteOptions = {}): Promise<CrawlSite> {
  const n = o.pages ?? 500;
  if (n < 40) throw new Error('a crawl site has at least 40 pages');
  const address = o.host ?? '127.0.0.1';
  const name = o.hostName?.toLowerCase();
  const subHost = name ? `docs.${name}` : undefined;
  const sub = subHost && `${subHost}/sub/1`;
  const rnd = prng(o.seed ?? 36);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  // Not a fair shuffle, but the same order for the same seed, which is what matters here.
  const shuffled = <T>(xs: T[]): T[] => [...xs].sort(() => rnd() - 0.5);

  const hits = new Map<string, number>();
  const log: CrawlSite['log'] = [];
  const routes = new Map<string, Route>();
  const server = http.createServer((req, res) => {
    const host = req.headers.host ?? '';
    const onSub = subHost !== undefined && host.replace(/:\d+$/, '').toLowerCase() === subHost;
    const raw = req.url ?? '/';
    const counted = (onSub ? subHost : '') + raw;
    hits.set(counted, (hits.get(counted) ?? 0) + 1);
    log.push({ path: raw, at: Date.now(), host });
    // One page for every spelling of its path: query and trailing slash do not matter.
    let path = raw.split(/[?#]/)[0];
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const r = routes.get((onSub ? subHost : '') + path);
    if (!r) res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
    else
      res.writeHead(r.status, r.location ? { location: r.location } : { 'content-type': r.type }).end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  server.unref();
  const port = (server.address() as AddressInfo).port;
  let elsewhere = '';
  const other = await new Fixture({ '/elsewhere': (q, s) => send(200, HTML, elsewhere)(q, s) }).start(OTHER);

  const siteHost = name ?? address;
  const origin = `http://${siteHost}:${port}`;
  const upper = `HTTP://${siteHost.toUpperCase()}:${port}`;
  const urlOf = (key: string): string =>
    key.startsWith('/')
      ? origin + key
      : key.startsWith(`${OTHER}/`)
        ? other.url(key.slice(OTHER.length))
        : `http://${key.replace('/', `:${port}/`)}`;
  const keyOf = (url: string): string => {
    const u = new URL(url);
    const own = u.hostname === siteHost && u.port === String(port);
    return (own ? '' : u.hostname) + u.pathname + u.search;
  };
  const ln = (key: string, href = key): Link => ({ key, href });

  // The tree: '/' links to the depth-1 pages, each of those to about FAN pages, and so on.
  const p = (i: number) => `/p/${i}`;
  const l1 = ['/about', ...Array.from({ length: 10 }, (_, i) => p(i + 1))];
  const pool = shuffled(Array.from({ length: n - 11 - 10 }, (_, i) => p(i + 11)));
  const own = new Map<string, Link[]>([...l1, ...pool].map((k) => [k, []]));
  const levels: string[][] = [['/'], l1];
  while (pool.length) {
    const parents = levels[levels.length - 1];
    const level = pool.splice(0, parents.length * FAN);
    level.forEach((k, i) => own.get(parents[i % parents.length])!.push(ln(k)));
    levels.push(level);
  }
  // Back links to '/' and depth-1 pages (some spelled as variants), cross links one level down.
  const variant = (k: string) =>
    pick([`${k}?utm_source=crawl&utm_medium=link`, `${k}#section`, `${k}/`, `${upper}${k}`]);
  const back = (from: string): Link => {
    const k = pick(['/', ...l1].filter((x) => x !== from));
    return ln(k, k !== '/' && rnd() < 0.25 ? variant(k) : k);
  };
  for (let d = 1; d < levels.length; d++) {
    for (const k of levels[d]) {
      const links = own.get(k)!;
      for (let want = 3 + Math.floor(rnd() * 4); links.length < want;) {
        links.push(levels[d + 1] && rnd() < 0.5 ? ln(pick(levels[d + 1])) : back(k));
      }
    }
  }

  // The traps, each linked from '/' or a depth-1 page.
  const v = '/p/7';
  const spellings = [`${v}?utm_source=x&utm_medium=y`, `${v}#section`, `${v}/`, `${upper}${v}`];
  own.set('/', [...[...l1, '/deep/1', '/private/1'].map((k) => ln(k)), ...spellings.map((h) => ln(v, h))]);
  own.get('/about')!.push(ln('/old/7'));
  const [ca, cb] = shuffled(l1);
  own.get(ca)!.push(ln('/copy/a'));
  own.get(cb)!.push(ln('/copy/b'));
  own.set('/copy/a', [back('/copy/a'), back('/copy/a'), ln('/private/2')]);
  own.set('/copy/b', own.get('/copy/a')!);
  own.get(pick(levels[2]))!.push(ln('/private/2'));
  own.get('/p/4')!.push(ln(`${OTHER}/elsewhere`, other.url('/elsewhere')));
  if (sub) own.get('/p/3')!.push(ln(sub, urlOf(sub)));
  for (let i = 1; i <= 6; i++) own.set(`/deep/${i}`, i < 6 ? [ln(`/deep/${i + 1}`)] : [back('/deep/6')]);
  own.set('/orphan/1', [back('/orphan/1'), back('/orphan/1')]);
  if (sub) own.set(sub, [ln('/p/5', `${origin}/p/5`), ln('/p/6', `${upper}/p/6`)]);
  own.set(`${OTHER}/elsewhere`, [ln('/', `${origin}/`)]);

  // Every page: a unique title and text, the navigation and footer (cycles), its own links.
  const title = (key: string) => `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}, page ${key}`;
  const words = () => Array.from({ length: 24 }, () => pick(WORDS)).join(' ');
  const text = (key: string) =>
    [1, 2, 3]
      .map((i) => `<p>Part ${i} of ${key} tells of the ${words()}, and so on to the end.</p>`)
      .join('');
  const nav = [ln('/'), ln('/p/1'), ln('/p/2')];
  const out = (key: string): Link[] => (own.has(key) ? [...nav, ...own.get(key)!, ln('/about')] : []);
  const render = (key: string, t = title(key)): string => {
    const abs = key.startsWith('/') ? '' : origin;
    const a = (l: Link, label: string) =>
      `<a href="${abs && l.href.startsWith('/') ? abs + l.href : l.href}">${label}</a>`;
    const items = (own.get(key) ?? []).map((l, i) => `<li>${a(l, `Related ${i + 1}`)}</li>`).join('');
    return html(
      `<nav>${nav.map((l, i) => a(l, ['Home', 'First', 'Second'][i])).join(' ')}</nav>` +
        `<article><h1>${t}</h1>${text(key)}<h2 id="section">Related</h2><ul>${items}</ul></article>` +
        `<footer>${a(ln('/about'), 'About this site')}</footer>`,
      t,
    );
  };
  const ok = (body: string | Buffer, type = HTML): Route => ({ status: 200, type, body });
  for (const k of own.keys()) if (k !== '/copy/b' && !k.startsWith(OTHER)) routes.set(k, ok(render(k)));
  routes.set('/copy/b', routes.get('/copy/a')!);
  for (const k of ['/private/1', '/private/2', '/private/3']) routes.set(k, ok(html(text(k), title(k))));
  routes.set('/old/7', { status: 301, location: v, body: '' });
  elsewhere = render(`${OTHER}/elsewhere`);

  // robots.txt and the sitemaps: an index of a gzip file and a plain one, and /sitemap.xml.
  const delay = o.crawlDelayS ? `Crawl-delay: ${o.crawlDelayS}\n` : '';
  const robots = `User-agent: *\nDisallow: /private/\n${delay}`;
  routes.set('/robots.txt', ok(`${robots}Sitemap: ${origin}/sitemap-index.xml\n`, 'text/plain'));
  if (subHost) routes.set(`${subHost}/robots.txt`, ok(robots, 'text/plain'));
  const xml = (root: string, item: string, urls: string[]) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
    `${urls.map((u) => `<${item}><loc>${u}</loc></${item}>`).join('')}</${root}>`;
  const plain = ['/', ...l1];
  const gz = [...l1, ...shuffled(levels[levels.length - 1]).slice(0, 5), '/orphan/1'];
  const more = ['/about', '/private/3', `${OTHER}/elsewhere`];
  routes.set('/sitemap.xml', ok(xml('urlset', 'url', plain.map(urlOf)), 'application/xml'));
  const gzipped = zlib.gzipSync(xml('urlset', 'url', gz.map(urlOf)));
  routes.set('/sitemaps/pages.xml.gz', ok(gzipped, 'application/gzip'));
  routes.set('/sitemaps/more.xml', ok(xml('urlset', 'url', more.map(urlOf)), 'application/xml'));
  const files = [`${origin}/sitemaps/pages.xml.gz`, `${origin}/sitemaps/more.xml`];
  routes.set('/sitemap-index.xml', ok(xml('sitemapindex', 'sitemap', files), 'application/xml'));
  const sitemapKeys = [...new Set([...plain, ...gz, ...more])];

  const inScope = (key: string, e: ExpectedOptions) =>
    key.startsWith('/')
      ? !key.startsWith('/private/')
      : subHost && key.startsWith(`${subHost}/`)
        ? !!(e.allowSubdomains || e.allowExternal)
        : !!e.allowExternal;
  /** Breadth first from '/', as a crawl finds pages: the seed's findings are its links and the sitemaps. */
  const walk = (e: ExpectedOptions): Map<string, number> => {
    const depth = new Map([['/', 0]]);
    const queue = ['/'];
    const add = (key: string, d: number) => {
      if (d > e.maxDepth || depth.has(key) || !inScope(key, e)) return;
      depth.set(key, d);
      queue.push(key);
    };
    for (let i = 0; i < queue.length; i++) {
      const d = depth.get(queue[i])!;
      if (e.sitemap !== 'only') for (const l of out(queue[i])) add(l.key, d + 1);
      if (i === 0 && e.sitemap !== 'skip') for (const k of sitemapKeys) add(k, 1);
    }
    return depth;
  };
  const linkDepth = walk({ maxDepth: Infinity, sitemap: 'skip', allowExternal: true });

  return {
    origin,
    port,
    names: name ? { [name]: [address], [subHost!]: [address] } : {},
    otherOrigin: other.url(''),
    hits,
    otherHits: other.hits,
    log,
    redirectTargets: new Set([v]),
    expected: (e) => new Set(walk(e).keys()),
    depthOf: (key) => linkDepth.get(key),
    keyOf,
    urlOf,
    reset: () => {
      hits.clear();
      log.length = 0;
      other.hits.clear();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await other.stop();
    },
  };
}
