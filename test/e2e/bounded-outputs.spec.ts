import type { INestApplication } from '@nestjs/common';
import { sql } from 'kysely';
import request from 'supertest';
import { ContentCache, Dcache } from '../../src/dcache';
import { createTestApp, waitForJob, fleet } from '../support/app';
import { createPgDatabase } from '../support/backends';
import { Fixture, html, redirect, send } from '../support/fixture';

/**
 * SPEC "Safe under a hostile caller": outputs are bounded. `links` at most 1,000 entries of at
 * most 2,048 characters, inside max_bytes and the class cap together with the content (the
 * content first, the links in what it leaves); every metadata field at most 2 KiB (description
 * 4 KiB); the content cache's budget and a job's nbytes count every stored byte.
 */
/** Pages of tens of thousands of elements take seconds to extract on a busy machine. */
const TIMEOUT_MS = 60_000;
/** The rest of an envelope beside its content and links: urls, title, metadata, flags. */
const ENVELOPE = 8 * 1024;
/** The path a redirect sends every page to: relative links made absolute against it are long. */
const LONG = 'x'.repeat(600);

type Link = { url: string; text: string };
const linkBytes = (links: Link[]) => links.reduce((n, l) => n + Buffer.byteLength(JSON.stringify(l)) + 1, 0);

/** `n` relative links, `a{i}`, named `{text}{i}`; an overlong absolute one first when `overlong`. */
function linksPage(n: number, text: string, overlong = false): string {
  const items = Array.from({ length: n }, (_, i) => `<li><a href="a${i}">${text}${i}</a></li>`);
  const first = overlong ? `<li><a href="/${'q'.repeat(3000)}">overlong</a></li>` : '';
  return html(`<h1>Links</h1><p>A page of links, every one relative.</p><ul>${first}${items.join('')}</ul>`);
}

const authors = Array.from({ length: 50_000 }, (_, i) => ({ '@type': 'Person', name: `Author Number ${i}` }));
const metadataPage = html(
  '<article><h1>Crowded</h1><p>An article with a great many authors and a long description.</p></article>',
  'T'.repeat(100_000),
  `<meta property="og:description" content="${'説'.repeat(1900)}">
   <script type="application/ld+json">${JSON.stringify({
     '@type': 'NewsArticle',
     headline: 'Crowded',
     author: authors,
   })}</script>`,
);

const pages: Record<string, string> = {
  many: linksPage(20_000, 'link ', true),
  c1: linksPage(1200, 'a'),
  c2: linksPage(1200, 'b'),
  c3: linksPage(1200, 'c'),
  meta: metadataPage,
};

function fixture(): Fixture {
  return new Fixture({
    '/r/*': (req, res) => redirect(`/p/${LONG}/${req.url!.slice(3)}`)(req, res),
    '/p/*': (req, res) => send(200, 'text/html', pages[req.url!.split('/').pop()!] ?? 'none')(req, res),
  });
}

describe('bounded outputs', () => {
  let app: INestApplication;
  let fx: Fixture;
  const fetchIt = (body: object) =>
    request(app.getHttpServer())
      .post('/v1/fetch')
      .set(fleet)
      .send({ timeout_ms: TIMEOUT_MS, ...body });

  beforeAll(async () => {
    fx = await fixture().start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  it('20,000 links through a redirect with max_bytes 1000: the whole answer stays within max_bytes and the envelope', async () => {
    const r = await fetchIt({ url: fx.url('/r/many'), links: true, format: 'text', max_bytes: 1000 });
    expect(r.status).toBe(200);
    expect(r.body.final_url).toContain(LONG);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(1000 + ENVELOPE);
    expect(r.body.bytes + linkBytes(r.body.links)).toBeLessThanOrEqual(1000);
    expect(r.body.truncated).toBe(true);
  });

  it('at most 1,000 links of at most 2,048 characters, in document order, the cut said', async () => {
    const r = await fetchIt({ url: fx.url('/r/many'), links: true, format: 'text' });
    expect(r.status).toBe(200);
    const links: Link[] = r.body.links;
    expect(links).toHaveLength(1000);
    for (const l of links) expect(l.url.length + l.text.length).toBeLessThanOrEqual(2048);
    // The overlong link is left out, not cut into another URL; the rest keep their order.
    expect(links[0]).toEqual({ url: fx.url(`/p/${LONG}/a0`), text: 'link 0' });
    expect(links[999].text).toBe('link 999');
    expect(r.body.truncated).toBe(true);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(2 * 1024 * 1024 + ENVELOPE);
  });

  it('the links fill what the content leaves of max_bytes', async () => {
    const r = await fetchIt({ url: fx.url('/r/many'), links: true, format: 'text', max_bytes: 400_000 });
    const links: Link[] = r.body.links;
    expect(r.body.bytes).toBeLessThan(400_000); // the content whole, the links after it
    expect(links.length).toBeGreaterThan(0);
    expect(links.length).toBeLessThan(1000);
    expect(links.map((l) => l.text)).toEqual(links.map((_, i) => `link ${i}`));
    expect(r.body.bytes + linkBytes(links)).toBeLessThanOrEqual(400_000);
    expect(r.body.truncated).toBe(true);
  });

  it('a JSON-LD list of 50,000 authors, a long description and title: each field within its bound', async () => {
    const r = await fetchIt({ url: fx.url('/r/meta') });
    expect(r.status).toBe(200);
    const m = r.body.metadata;
    expect(m.author).toMatch(/^Author Number 0, Author Number 1, /);
    expect(Buffer.byteLength(m.author)).toBeLessThanOrEqual(2048);
    expect(m.description).toMatch(/^説+…$/);
    expect(Buffer.byteLength(m.description)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(r.body.title)).toBeLessThanOrEqual(2048);
    for (const v of Object.values(m))
      if (typeof v === 'string') expect(Buffer.byteLength(v)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(r.body.bytes + 4 * ENVELOPE);
  });

  it("a batch job's nbytes counts its results' links and metadata, and they are bounded too", async () => {
    const sub = await request(app.getHttpServer())
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [{ url: fx.url('/r/c3') }],
        options: { links: true, format: 'text', max_bytes: 100_000, timeout_ms: TIMEOUT_MS },
      });
    expect(sub.status).toBe(202);
    const job = await waitForJob(app, sub.body.id);
    expect(job.status).toBe('done');
    const res = (await request(app.getHttpServer()).get(`/v1/batch/${sub.body.id}/results`).set(fleet)).body;
    const result = res.results[0].result;
    expect(result.links.length).toBeGreaterThan(0);
    expect(result.bytes + linkBytes(result.links)).toBeLessThanOrEqual(100_000);
    // nbytes is the stored result: content, links and metadata.
    expect(job.nbytes).toBe(Buffer.byteLength(JSON.stringify(result)));
    expect(job.nbytes).toBeGreaterThanOrEqual(
      result.bytes + linkBytes(result.links) + Buffer.byteLength(JSON.stringify(result.metadata)),
    );
    expect(job.nbytes).toBeLessThanOrEqual(100_000 + ENVELOPE);
  });
});

describe.each(['sqlite', 'postgres'] as const)(
  'the content cache counts stored links and metadata, on %s',
  (backend) => {
    let app: INestApplication;
    let fx: Fixture;
    let drop: (() => Promise<void>) | undefined;
    // A page's entry holds its article's html (every format is written from it) beside its links.
    const budget = 2 * 1024 * 1024;
    const fetchIt = (page: string) =>
      request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url(`/r/${page}`), links: true, format: 'text', timeout_ms: TIMEOUT_MS });

    beforeAll(async () => {
      fx = await fixture().start();
      const env: Record<string, string> = {
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_CACHE_MAX_BYTES: String(budget),
      };
      if (backend === 'postgres') {
        const pg = await createPgDatabase();
        drop = pg.drop;
        env.SIFT_DATABASE_URL = pg.url;
      }
      ({ app } = await createTestApp(env));
    });
    afterAll(async () => {
      await app.close();
      await fx.stop();
      await drop?.();
    });

    /** Every byte the cache's tables hold for pages: bodies once each, and each key's meta. */
    async function stored(): Promise<number> {
      const db = app.get(Dcache).kysely;
      const b = await sql<{ n: string }>`SELECT coalesce(sum(nbytes), 0) AS n FROM cache_body`.execute(db);
      const m = await sql<{
        n: string;
      }>`SELECT coalesce(sum(octet_length(meta)), 0) AS n FROM cache_entry`.execute(db);
      return Number(b.rows[0].n) + Number(m.rows[0].n);
    }

    it('a page of small content and many long links weighs its links in the budget, and evicts by them', async () => {
      const cache = app.get(ContentCache);
      const first = await fetchIt('c1');
      expect(cache.size()).toBe(await stored());
      const links = linkBytes(first.body.links);
      expect(cache.size()).toBeGreaterThan(links);
      expect(first.body.links).toHaveLength(1000);
      expect(first.body.bytes * 10).toBeLessThan(links); // the links weigh far more than the content
      // A second such page passes the budget: the first goes, by the weight of its links.
      expect(2 * cache.size()).toBeGreaterThan(budget);
      await fetchIt('c2');
      expect(cache.stats().evictions).toBeGreaterThanOrEqual(1);
      expect(cache.size()).toBeLessThanOrEqual(budget);
      expect(cache.size()).toBe(await stored());
      expect((await fetchIt('c1')).body.cached).toBe(false);
      expect((await fetchIt('c1')).body.cached).toBe(true);
    });
  },
);
