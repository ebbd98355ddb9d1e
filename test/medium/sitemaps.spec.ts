import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import * as ipaddr from 'ipaddr.js';
import { Clock } from '../../src/common/clock';
import { SITEMAP_LIMITS, readSitemaps, type SitemapFetch } from '../../src/crawl/sitemaps';
import { openDcache, type Dcache } from '../../src/dcache';
import { AddressPolicy } from '../../src/fetch/address-policy';
import { Fetcher } from '../../src/fetch/fetcher';
import { Robots } from '../../src/fetch/robots';

type Route = { status?: number; type?: string; body: string | Buffer };

/** A real HTTP server on 127.0.0.1 serving `routes` by path (404 for the rest). */
async function serve(routes: (base: string) => Record<string, Route>) {
  let table: Record<string, Route> = {};
  const server = http.createServer((req, res) => {
    const route = table[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(route?.status ?? (route ? 200 : 404), { 'content-type': route?.type ?? 'text/plain' });
    res.end(route?.body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  table = routes(base);
  return {
    base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const urlset = (locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs
    .map((l) => `  <url><loc>${l}</loc><lastmod>2024-01-01</lastmod></url>`)
    .join('\n')}\n</urlset>\n`;
const index = (locs: string[]) =>
  `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs
    .map((l) => `<sitemap><loc>${l}</loc></sitemap>`)
    .join('')}</sitemapindex>`;
const xml = (body: string): Route => ({ type: 'application/xml', body });

/** A gzip of 64 MiB of XML in about 64 KB: one member per MiB of spaces between two entries. */
function gzipBomb(base: string): Buffer {
  const spaces = zlib.gzipSync(Buffer.alloc(1024 * 1024, 0x20), { level: 9 });
  return Buffer.concat([
    zlib.gzipSync(`<urlset><url><loc>${base}/bomb/first</loc></url>`),
    ...Array.from({ length: 64 }, () => spaces),
    zlib.gzipSync(`<url><loc>${base}/bomb/last</loc></url></urlset>`),
  ]);
}

describe('sitemaps', () => {
  let site: Awaited<ReturnType<typeof serve>>;
  let calls: { url: string; maxBytes: number }[];
  let base: string;

  beforeAll(async () => {
    site = await serve((b) => ({
      '/robots.txt': {
        body: `User-agent: *\nDisallow: /private\nSitemap: ${b}/index.xml\nSitemap: ${b}/b.xml\n`,
      },
      '/index.xml': xml(
        index([
          `${b}/a.xml.gz`,
          `${b}/b.xml`,
          `${b}/index.xml`,
          `${b}/missing.xml`,
          `${b}/list.txt`,
          `${b}/b.xml#again`,
          `${b}/bad.gz`,
          'http://blocked.test/sitemap.xml',
          'http://127.0.0.1:1/closed.xml',
          'ftp://127.0.0.1/not-http.xml',
        ]),
      ),
      '/a.xml.gz': {
        type: 'application/octet-stream',
        body: zlib.gzipSync(urlset([`${b}/p/1`, `${b}/p/2`, `${b}/p/shared`])),
      },
      '/b.xml': xml(
        '\ufeff' +
          urlset([
            `${b}/search?q=a&amp;page=2`,
            `${b}/p/shared`,
            `\n    ${b}/p/spaced\n  `,
            `<![CDATA[${b}/p/cdata?a=1&b=2]]>`,
            '/relative',
            'javascript:alert(1)',
            `${b}/${'x'.repeat(2100)}`,
          ]).replace(
            '</urlset>',
            `<url><loc>${b}/p/with-image</loc><image:image><image:loc>${b}/img.png</image:loc></image:image></url>` +
              `<sm:url><sm:loc>${b}/p/prefixed</sm:loc></sm:url></urlset>`,
          ),
      ),
      '/list.txt': { body: `${b}/t/1\r\n\n  not a url\n/t/relative\nhttps://other.test/t/2\n${b}/p/1` },
      '/bad.gz': { type: 'application/gzip', body: Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7]) },
      '/bomb.xml.gz': { type: 'application/gzip', body: gzipBomb(b) },
      '/exact.xml': xml(urlset([`${b}/e/1`, `${b}/e/2`, `${b}/e/3`])),
    }));
    base = site.base;
  });
  afterAll(() => site.close());
  beforeEach(() => {
    calls = [];
  });

  /** The port over node's fetch, reading at most maxBytes; a refused address throws as the real one does. */
  const port: SitemapFetch = async (url, maxBytes) => {
    calls.push({ url, maxBytes });
    if (new URL(url).hostname !== '127.0.0.1')
      throw Object.assign(new Error('blocked address'), { code: 'blocked_address' });
    const res = await fetch(url);
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
    await reader.cancel();
    const body = Buffer.concat(chunks).subarray(0, maxBytes);
    return { status: res.status, body, contentType: res.headers.get('content-type') ?? '' };
  };
  /** Entries' URLs, the site's own by path. */
  const urls = (r: { entries: { url: string }[] }) =>
    r.entries.map((e) => (e.url.startsWith(base) ? e.url.slice(base.length) : e.url));

  it('reads an index breadth first: gzip, XML with entities and CDATA, plain text; each file once, each entry once', async () => {
    const r = await readSitemaps([`${base}/index.xml`, `${base}/index.xml`], port);
    expect(urls(r)).toEqual([
      '/p/1',
      '/p/2',
      '/p/shared',
      '/search?q=a&page=2',
      '/p/spaced',
      '/p/cdata?a=1&b=2',
      '/p/with-image',
      '/p/prefixed',
      '/t/1',
      'https://other.test/t/2',
    ]);
    // The 404, the gzip that does not inflate and the closed port; the refused address is not an error.
    expect(r.errors).toBe(3);
    expect(r.truncated).toBe(false);
    // SPEC "Crawl and map": 50 files, 50,000 entries, 50 MiB.
    expect(SITEMAP_LIMITS).toEqual({ files: 50, entries: 50_000, bytes: 50 * 1024 * 1024 });
    const fetched = calls.map((c) => c.url);
    expect(fetched).toEqual([
      `${base}/index.xml`,
      `${base}/a.xml.gz`,
      `${base}/b.xml`,
      `${base}/missing.xml`,
      `${base}/list.txt`,
      `${base}/bad.gz`,
      'http://blocked.test/sitemap.xml',
      'http://127.0.0.1:1/closed.xml',
    ]);
  });

  it('keep filters the entries (the crawl scope), not the files', async () => {
    const r = await readSitemaps([`${base}/index.xml`], port, { keep: (u) => u.pathname.startsWith('/t/') });
    expect(urls(r)).toEqual(['/t/1', 'https://other.test/t/2']);
    expect(calls).toHaveLength(8);
  });

  it('each fetch may read what is left of the byte budget', async () => {
    await readSitemaps([`${base}/b.xml`, `${base}/a.xml.gz`, `${base}/list.txt`], port);
    const decodedB = (await (await fetch(`${base}/b.xml`)).arrayBuffer()).byteLength;
    const decodedA = zlib.gunzipSync(
      Buffer.from(await (await fetch(`${base}/a.xml.gz`)).arrayBuffer()),
    ).length;
    expect(calls.map((c) => c.maxBytes)).toEqual([
      SITEMAP_LIMITS.bytes,
      SITEMAP_LIMITS.bytes - decodedB,
      SITEMAP_LIMITS.bytes - decodedB - decodedA,
    ]);
  });

  it('the file cap: files past it are not fetched, and the answer says it is truncated', async () => {
    const r = await readSitemaps([`${base}/index.xml`], port, {
      limits: { ...SITEMAP_LIMITS, files: 2 },
    });
    expect(calls.map((c) => c.url)).toEqual([`${base}/index.xml`, `${base}/a.xml.gz`]);
    expect(urls(r)).toEqual(['/p/1', '/p/2', '/p/shared']);
    expect(r.truncated).toBe(true);
  });

  it('the entry cap: truncated only when an entry past it was there', async () => {
    const limits = { ...SITEMAP_LIMITS, entries: 3 };
    const over = await readSitemaps([`${base}/b.xml`, `${base}/exact.xml`], port, { limits });
    expect(urls(over)).toEqual(['/search?q=a&page=2', '/p/shared', '/p/spaced']);
    expect(over.truncated).toBe(true);
    // Reading stopped at the cap: the second file was never asked for.
    expect(calls).toHaveLength(1);
    const exact = await readSitemaps([`${base}/exact.xml`, `${base}/exact.xml`], port, { limits });
    expect(urls(exact)).toEqual(['/e/1', '/e/2', '/e/3']);
    expect(exact.truncated).toBe(false);
  });

  it('the byte cap: a gzip bomb inflates no further than the budget; its entries before the cut count', async () => {
    const bytes = 4 * 1024 * 1024;
    // Buffers held while it is read, sampled: the 64 MiB the bomb holds are never all inflated.
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
    const r = await readSitemaps([`${base}/bomb.xml.gz`, `${base}/exact.xml`], port, {
      limits: { ...SITEMAP_LIMITS, bytes },
    }).finally(() => clearInterval(sampler));
    expect(calls[0].maxBytes).toBe(bytes);
    expect(urls(r)).toEqual(['/bomb/first']);
    expect(r.truncated).toBe(true);
    expect(r.errors).toBe(0);
    // The budget is spent: the next file is not fetched.
    expect(calls).toHaveLength(1);
    expect(peak - before).toBeLessThan(8 * bytes);
  });

  it('the byte cap on a plain body: a cut file gives its whole entries, not the one cut', async () => {
    const body = urlset([`${base}/e/1`, `${base}/e/2`, `${base}/e/3`]);
    const cutAt = body.indexOf('/e/3') + 2;
    const r = await readSitemaps([`${base}/exact.xml`, `${base}/b.xml`], port, {
      limits: { ...SITEMAP_LIMITS, bytes: cutAt },
    });
    expect(urls(r)).toEqual(['/e/1', '/e/2']);
    expect(r.truncated).toBe(true);
    // A plain-text sitemap's last line, cut, is not read even when it looks whole.
    const line = `${base}/t/1`;
    const text = (bytes: number) =>
      readSitemaps([`${base}/list.txt`], port, { limits: { ...SITEMAP_LIMITS, bytes } });
    expect(await text(line.length)).toEqual({ entries: [], truncated: true, errors: 0 });
    expect(urls(await text(line.length + 4))).toEqual(['/t/1']);
  });

  it('abort: reading stops at once and what was read is the answer', async () => {
    const ac = new AbortController();
    const aborting: SitemapFetch = (url, maxBytes) => {
      if (calls.length === 1) ac.abort();
      return port(url, maxBytes);
    };
    const r = await readSitemaps([`${base}/a.xml.gz`, `${base}/b.xml`, `${base}/list.txt`], aborting, {
      signal: ac.signal,
    });
    expect(urls(r)).toEqual(['/p/1', '/p/2', '/p/shared']);
    expect(r.truncated).toBe(true);
    expect(calls).toHaveLength(2);
  });

  describe("robots.txt's Sitemap lines", () => {
    let dcache: Dcache;
    let fetcher: Fetcher;
    let robots: Robots;
    beforeAll(async () => {
      dcache = await openDcache({ path: ':memory:' });
      fetcher = new Fetcher({ policy: new AddressPolicy([ipaddr.parseCIDR('127.0.0.1/32')]) });
      robots = new Robots(fetcher, dcache.hosts, new Clock(), 'sift');
    });
    afterAll(async () => {
      await fetcher.close();
      await dcache.close();
    });

    it('are the start of a read, with /sitemap.xml', async () => {
      const named = await robots.sitemaps(base, 'fleet', 'fleet:t');
      expect(named).toEqual([`${base}/index.xml`, `${base}/b.xml`]);
      const r = await readSitemaps([...named, `${base}/sitemap.xml`], port);
      expect(urls(r)).toContain('/search?q=a&page=2');
      // /sitemap.xml is a 404 here.
      expect(r.errors).toBe(4);
      // The rules still hold, through the same cached file.
      await expect(robots.check(new URL(`${base}/private/x`), 'fleet', 'fleet:t')).rejects.toMatchObject({
        code: 'robots_denied',
      });
    });

    it('are none when robots.txt is absent or failing (never robots_denied); a refused address throws', async () => {
      const failing = await serve(() => ({ '/robots.txt': { status: 503, body: 'busy' } }));
      const absent = await serve(() => ({}));
      try {
        await expect(robots.sitemaps(failing.base, 'fleet', 'fleet:t')).resolves.toEqual([]);
        await expect(robots.sitemaps(absent.base, 'fleet', 'fleet:t')).resolves.toEqual([]);
        await expect(robots.sitemaps(base, 'restricted', 'restricted:t')).rejects.toMatchObject({
          code: 'blocked_address',
        });
      } finally {
        await failing.close();
        await absent.close();
      }
    });
  });
});
