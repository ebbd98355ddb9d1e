import * as http from 'node:http';
import * as zlib from 'node:zlib';
import { type CrawlSite, TRAPS, resolverTable, startCrawlSite } from '../support/crawl-site';

/** SPEC's canonical form, as far as this site needs it: no fragment, no utm_*, no trailing slash. */
function canonical(href: string, base: string): string {
  const u = new URL(href, base);
  u.hash = '';
  for (const name of [...u.searchParams.keys()]) if (name.startsWith('utm_')) u.searchParams.delete(name);
  if (u.pathname.length > 1) u.pathname = u.pathname.replace(/\/$/, '');
  return u.href;
}

const body = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

/** A GET that names its own Host header (fetch will not), to reach the site's subdomain. */
const getAs = (url: string, host: string) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    http
      .get(url, { headers: { host } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
      })
      .on('error', reject);
  });

/**
 * What a crawl would find by reading the served pages, not the site's model: every page fetched,
 * its hrefs made canonical, robots.txt's /private/ left out, redirects not
 * followed (a redirect is a duplicate, never expanded). Depth by link hops from '/'.
 */
async function crawlServed(site: CrawlSite): Promise<{ depth: Map<string, number>; edges: string[][] }> {
  const depth = new Map([['/', 0]]);
  const edges: string[][] = [];
  for (let level = ['/']; level.length;) {
    const next: string[] = [];
    const pages = await Promise.all(level.map((k) => fetch(site.urlOf(k), { redirect: 'manual' })));
    for (const [i, res] of pages.entries()) {
      expect([200, 301]).toContain(res.status);
      const html = await res.text();
      for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
        const key = site.keyOf(canonical(href, site.urlOf(level[i])));
        if (!key.startsWith('/') || key.startsWith('/private/')) continue;
        edges.push([level[i], key]);
        if (depth.has(key)) continue;
        depth.set(key, depth.get(level[i])! + 1);
        next.push(key);
      }
    }
    level = next;
  }
  return { depth, edges };
}

describe('the crawl fixture site', () => {
  let site: CrawlSite;
  beforeAll(async () => {
    site = await startCrawlSite({});
  });
  afterAll(() => site.close());

  it('answers every spelling of a page with the same bytes, and counts requests as received', async () => {
    const page = await body(`${site.origin}/p/7`);
    expect(page.toString()).toContain('<title>');
    for (const v of ['/p/7?utm_source=x&utm_medium=y', '/p/7/', '/p/7#section']) {
      expect((await body(site.origin + v)).equals(page)).toBe(true);
    }
    expect((await body(`HTTP://${site.origin.slice('http://'.length)}/p/7`)).equals(page)).toBe(true);
    expect(site.hits.get('/p/7?utm_source=x&utm_medium=y')).toBe(1);
    expect(site.hits.get('/p/7/')).toBe(1);
    const seed = (await body(`${site.origin}/`)).toString();
    for (const v of ['/p/7?utm_source=x', '/p/7#section', '/p/7/"', 'HTTP://127.0.0.1:']) {
      expect(seed).toContain(v);
    }
    const [a, b] = await Promise.all(TRAPS.copies.map((k) => body(site.urlOf(k))));
    expect(a.equals(b)).toBe(true);
    expect(a.equals(page)).toBe(false);
    const old = await fetch(site.urlOf(TRAPS.redirect), { redirect: 'manual' });
    await old.arrayBuffer();
    expect([old.status, old.headers.get('location')]).toEqual([301, '/p/7']);
    const missing = await fetch(`${site.origin}/nowhere`);
    expect([missing.status, await missing.text()]).toEqual([404, 'no such page']);
    site.reset();
    expect([site.hits.size, site.log.length]).toEqual([0, 0]);
  });

  it('has robots.txt, a sitemap index of a gzip and a plain sitemap, and /sitemap.xml', async () => {
    const robots = await (await fetch(`${site.origin}/robots.txt`)).text();
    expect(robots).toBe(`User-agent: *\nDisallow: /private/\nSitemap: ${site.origin}/sitemap-index.xml\n`);
    const index = await (await fetch(`${site.origin}/sitemap-index.xml`)).text();
    expect(index).toContain(`<loc>${site.origin}/sitemaps/pages.xml.gz</loc>`);
    const gz = await fetch(`${site.origin}/sitemaps/pages.xml.gz`);
    expect(gz.headers.get('content-type')).toBe('application/gzip');
    const pages = zlib.gunzipSync(Buffer.from(await gz.arrayBuffer())).toString();
    expect(pages).toContain(`<loc>${site.origin}${TRAPS.orphan}</loc>`);
    const more = await (await fetch(`${site.origin}/sitemaps/more.xml`)).text();
    expect(more).toContain(`<loc>${site.origin}/private/3</loc>`);
    expect(more).toContain(`<loc>${site.otherOrigin}/elsewhere</loc>`);
    expect(await (await fetch(`${site.origin}/sitemap.xml`)).text()).toContain(`<loc>${site.origin}/</loc>`);
  });

  it('expects what its served pages lead to: 500 pages, the 6-hop page only at depth 6', async () => {
    const { depth: served, edges } = await crawlServed(site);
    const all = site.expected({ maxDepth: 20, sitemap: 'skip' });
    // Every page but the orphan, and the redirect's source.
    expect(all.size).toBe(500);
    expect(new Set(served.keys())).toEqual(all);
    for (const [k, d] of served) expect([k, site.depthOf(k)]).toEqual([k, d]);
    // Depths hold whatever order a crawl fetches in: a link goes one level down, or back to depth 0-1.
    const astray = edges.filter(([a, b]) => served.get(b)! > 1 && served.get(b) !== served.get(a)! + 1);
    expect(astray).toEqual([]);
    expect(site.expected({ maxDepth: 20, sitemap: 'include' }).size).toBe(501);
    expect(site.depthOf(TRAPS.deep)).toBe(6);
    expect(site.expected({ maxDepth: 5, sitemap: 'include' }).has(TRAPS.deep)).toBe(false);
    expect(site.expected({ maxDepth: 6, sitemap: 'skip' }).has(TRAPS.deep)).toBe(true);
    expect([...served.values()].filter((d) => d <= 3).length).toBeGreaterThan(490);
    expect(site.expected({ maxDepth: 0, sitemap: 'include' })).toEqual(new Set(['/']));
    const only = site.expected({ maxDepth: 3, sitemap: 'only' });
    expect(only.has(TRAPS.orphan) && !only.has('/old/7') && !only.has('/private/3')).toBe(true);
    expect(only.size).toBe(18);
    // A leaf the gzip sitemap lists is one hop away with the sitemap, three without it.
    const leaf = [...only].find((k) => site.depthOf(k) === 3)!;
    expect(site.expected({ maxDepth: 1, sitemap: 'include' }).has(leaf)).toBe(true);
    expect(site.expected({ maxDepth: 2, sitemap: 'skip' }).has(leaf)).toBe(false);
    for (const k of TRAPS.private) expect(all.has(k)).toBe(false);
    expect(site.redirectTargets).toEqual(new Set(['/p/7']));
  });

  it('every page it expects is html with a title of its own and at least 60 words', async () => {
    const titles = new Map<string, string>();
    for (const k of site.expected({ maxDepth: 20, sitemap: 'include' })) {
      const res = await fetch(site.urlOf(k));
      expect([k, res.status, res.headers.get('content-type')]).toEqual([k, 200, 'text/html; charset=utf-8']);
      const html = await res.text();
      const text = html.replace(/<[^>]+>/g, ' ');
      expect(text.split(/\s+/).filter(Boolean).length).toBeGreaterThanOrEqual(60);
      titles.set(k, /<title>(.*)<\/title>/.exec(html)![1]);
    }
    // Three pages answer another's body: the redirect, and one of the two copies.
    expect(new Set(titles.values()).size).toBe(titles.size - 2);
  });
});

describe('the crawl fixture site under a name', () => {
  it('serves a subdomain by Host, links by name, and sets Crawl-delay', async () => {
    const site = await startCrawlSite({ pages: 60, hostName: 'site.test', crawlDelayS: 1, seed: 7 });
    try {
      expect(site.origin).toBe(`http://site.test:${site.port}`);
      expect(resolverTable(site)).toEqual({ 'site.test': ['127.0.0.1'], 'docs.site.test': ['127.0.0.1'] });
      const local = `http://127.0.0.1:${site.port}`;
      const robots = await getAs(`${local}/robots.txt`, `site.test:${site.port}`);
      expect(robots.text).toContain('Crawl-delay: 1\n');
      const seed = await getAs(`${local}/`, `site.test:${site.port}`);
      expect(seed.text).toContain(`HTTP://SITE.TEST:${site.port}/p/7`);
      const sub = await getAs(`${local}/sub/1`, `docs.site.test:${site.port}`);
      expect(sub.status).toBe(200);
      expect(sub.text).toContain(`href="${site.origin}/"`);
      expect((await getAs(`${local}/sub/1`, `site.test:${site.port}`)).status).toBe(404);
      expect(site.hits.get('docs.site.test/sub/1')).toBe(1);
      expect(site.log.map((l) => l.host)).toContain(`docs.site.test:${site.port}`);
      const key = 'docs.site.test/sub/1';
      expect(site.urlOf(key)).toBe(`http://docs.site.test:${site.port}/sub/1`);
      expect(site.keyOf(site.urlOf(key))).toBe(key);
      expect(site.expected({ maxDepth: 3, sitemap: 'include' }).has(key)).toBe(false);
      expect(site.expected({ maxDepth: 3, sitemap: 'include', allowSubdomains: true }).has(key)).toBe(true);
      const wide = site.expected({ maxDepth: 3, sitemap: 'only', allowExternal: true });
      expect(wide.has('127.0.0.2/elsewhere') && !wide.has(key)).toBe(true);
      expect((await body(site.urlOf('127.0.0.2/elsewhere'))).toString()).toContain(`href="${site.origin}/"`);
      expect(site.otherHits.get('/elsewhere')).toBe(1);
    } finally {
      await site.close();
    }
  });
});
