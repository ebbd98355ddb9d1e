import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, fleet, FLEET_TOKEN, waitForJob } from '../support/app';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { Fixture, html, send } from '../support/fixture';

/**
 * A site's llms.txt read by crawls and maps (include, skip, only), and POST /v1/llmstxt's jobs
 * writing llms.txt and llms-full.txt, on both databases.
 */

const OTHER = { Authorization: 'Bearer other-fleet-token' };
const TOKENS = `${FLEET_TOKEN}:fleet-caller:fleet,other-fleet-token:other-caller:fleet`;

/** The site's pages: path → title, description, words, links. */
const PAGES: Record<string, { title: string; description: string; words: string; links: string[] }> = {
  '/': {
    title: 'Acme Widgets',
    description: 'Manuals and guides for Acme widgets.',
    words: 'Welcome to the widget works.',
    links: ['/docs/install', '/blog/hello', '/about'],
  },
  '/docs/install': {
    title: 'Installing a widget',
    description: 'Bolt the widget to a wall [firmly].',
    words: 'Take the four bolts from the box and drive them into the wall studs.',
    links: ['/'],
  },
  '/docs/config': {
    title: 'Configuring a widget',
    description: 'Every dial on the front panel.',
    words: 'The left dial sets the speed and the right dial sets the colour of the lamp.',
    links: ['/'],
  },
  '/api/reference': {
    title: 'Widget API reference',
    description: '',
    words: 'The widget answers on port 7000 with a small JSON document about its state.',
    links: [],
  },
  '/blog/hello': {
    title: 'Hello from the workshop',
    description: 'Our first post.',
    words: 'We started making widgets in a shed behind the bakery twelve years ago.',
    links: ['/'],
  },
  '/about': {
    title: 'About Acme',
    description: 'Who makes the widgets.',
    words: 'A dozen people in one workshop make every widget by hand and test it twice.',
    links: ['/'],
  },
  '/old/news': {
    title: 'Old news',
    description: 'Only the sitemap lists it.',
    words: 'This page is listed in the sitemap and linked from nowhere else at all.',
    links: [],
  },
};

const pageHtml = (p: (typeof PAGES)[string]) =>
  html(
    `<nav>${p.links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</nav><article><h1>${p.title}</h1>${[
      0, 1, 2,
    ]
      .map((k) => `<p>${p.words} It says so in paragraph ${k}, at enough length to be read as content.</p>`)
      .join('')}</article>`,
    p.title,
    p.description ? `<meta name="description" content="${p.description}">` : '',
  );

describe.each(BACKENDS)('llms.txt on %s', (backend) => {
  let app: INestApplication;
  let fx: Fixture;
  let pg: { url: string; drop: () => Promise<void> } | undefined;
  const http = () => request(app.getHttpServer());
  const crawl = async (body: object, path = '/v1/crawl', who = fleet) => {
    const sub = await http().post(path).set(who).send(body);
    if (sub.status !== 202) throw new Error(`${sub.status} ${sub.text}`);
    const job = await waitForJob(app, sub.body.id, who);
    expect(job.status).toBe('done');
    const r = await http().get(`/v1/batch/${sub.body.id}/results`).set(who);
    return {
      id: sub.body.id as string,
      location: sub.headers.location as string,
      results: r.body.results as {
        url: string;
        depth: number;
        parent_idx: number | null;
        result: { title: string; metadata: { description: string | null } } | null;
      }[],
    };
  };
  const paths = (rs: { url: string }[]) => rs.map((r) => new URL(r.url).pathname).sort();

  beforeAll(async () => {
    const routes: Record<string, ReturnType<typeof send>> = {};
    for (const [p, page] of Object.entries(PAGES)) routes[p] = send(200, 'text/html', pageHtml(page));
    routes['/llms.txt'] = (req, res) =>
      send(
        200,
        'text/plain; charset=utf-8',
        [
          '# Acme Widgets',
          '',
          '> What the widget makers want read.',
          '',
          '## Docs',
          '',
          '- [Install](/docs/install): bolting it up',
          `- [Configure](http://${req.headers.host}/docs/config#dials): the dials`,
          '- [API](<api/reference>)',
          '- [Elsewhere](http://elsewhere.test/page): another site, out of scope',
          '- [Mail us](mailto:widgets@example.com)',
        ].join('\n'),
      )(req, res);
    routes['/sitemap.xml'] = (req, res) =>
      send(
        200,
        'application/xml',
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://${req.headers.host}/old/news</loc></url></urlset>`,
      )(req, res);
    fx = await new Fixture(routes).start();
    pg = backend === 'postgres' ? await createPgDatabase() : undefined;
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_TOKENS: TOKENS,
      // One answer's cap: more than a page, less than all of them (Firecrawl's full text is cut).
      SIFT_FLEET_OUTPUT_CAP: '1500',
      ...(pg ? { SIFT_DATABASE_URL: pg.url } : {}),
    }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
    await pg?.drop();
  });
  beforeEach(() => fx.hits.clear());

  it("a crawl takes the llms.txt's links in scope as seeds one hop away, beside the page links and sitemaps", async () => {
    const { results } = await crawl({ url: fx.url('/'), llms_txt: 'include' });
    expect(paths(results)).toEqual(
      ['/', '/docs/install', '/docs/config', '/api/reference', '/blog/hello', '/about', '/old/news'].sort(),
    );
    const byPath = new Map(results.map((r) => [new URL(r.url).pathname, r]));
    // Only the llms.txt leads to these two: one hop from the seed, found on no page.
    for (const p of ['/docs/config', '/api/reference']) {
      expect(byPath.get(p)).toMatchObject({ depth: 1, parent_idx: null });
    }
    // The llms.txt's own links come first, in its order, before the seed page's.
    expect(results.slice(1, 4).map((r) => new URL(r.url).pathname)).toEqual([
      '/docs/install',
      '/docs/config',
      '/api/reference',
    ]);
    expect(fx.hitCount('/llms.txt')).toBe(1);
  });

  it('llms_txt: only follows its links and nothing else; skip, the default, never asks for it', async () => {
    const only = await crawl({ url: fx.url('/'), llms_txt: 'only' });
    expect(paths(only.results)).toEqual(['/', '/api/reference', '/docs/config', '/docs/install']);
    for (const p of ['/blog/hello', '/about', '/old/news', '/sitemap.xml']) expect(fx.hitCount(p)).toBe(0);

    fx.hits.clear();
    const skip = await crawl({ url: fx.url('/'), llms_txt: 'skip' });
    expect(paths(skip.results)).toEqual(['/', '/about', '/blog/hello', '/docs/install', '/old/news']);
    expect(fx.hitCount('/llms.txt')).toBe(0);
    const plain = await crawl({ url: fx.url('/') });
    expect(paths(plain.results)).toEqual(paths(skip.results));
    expect(fx.hitCount('/llms.txt')).toBe(0);
  });

  it('map: the llms.txt links with their titles, source llms_txt; only: those alone, no page read', async () => {
    const none = await http()
      .post('/v1/map')
      .set(fleet)
      .send({ url: fx.url('/') });
    expect(none.body.links.filter((l: { source: string }) => l.source === 'llms_txt')).toEqual([]);
    const all = await http()
      .post('/v1/map')
      .set(fleet)
      .send({ url: fx.url('/'), llms_txt: 'include' });
    expect(all.status).toBe(200);
    const listed = (all.body.links as { url: string; title: string; source: string }[]).filter(
      (l) => l.source === 'llms_txt',
    );
    // /docs/install is the seed page's link first, so it is listed once, as the page's.
    expect(listed.map((l) => [new URL(l.url).pathname, l.title])).toEqual([
      ['/docs/config', 'Configure'],
      ['/api/reference', 'API'],
    ]);
    fx.hits.clear();
    const only = await http()
      .post('/v1/map')
      .set(fleet)
      .send({ url: fx.url('/'), llms_txt: 'only' });
    expect(only.status).toBe(200);
    expect(only.body.links.map((l: { url: string }) => new URL(l.url).pathname)).toEqual([
      '/docs/install',
      '/docs/config',
      '/api/reference',
    ]);
    expect(fx.hitCount('/')).toBe(0);
    expect(fx.hitCount('/sitemap.xml')).toBe(0);
  });

  it('refuses what cannot be met, naming the field', async () => {
    for (const path of ['/v1/crawl', '/v1/map', '/v1/llmstxt']) {
      const both = await http()
        .post(path)
        .set(fleet)
        .send({ url: fx.url('/'), sitemap: 'only', llms_txt: 'only' });
      expect(both.status).toBe(400);
      expect(both.body.error.message).toMatch(/llms_txt: only/);
    }
    const mode = await http()
      .post('/v1/crawl')
      .set(fleet)
      .send({ url: fx.url('/'), llms_txt: 'all' });
    expect(mode.status).toBe(400);
    expect(mode.body.error.message).toMatch(/llms_txt/);
    const formats = await http()
      .post('/v1/llmstxt')
      .set(fleet)
      .send({ url: fx.url('/'), options: { formats: ['html'] } });
    expect(formats.status).toBe(400);
    expect(formats.body.error.message).toMatch(/options\.format/);
  });

  it('POST /v1/llmstxt: a job whose llms.txt lists every page read with its title and description, by section', async () => {
    const { id, location, results } = await crawl(
      { url: fx.url('/'), limit: 20, llms_txt: 'include' },
      '/v1/llmstxt',
    );
    expect(location).toBe(`/v1/llmstxt/${id}`);
    const got = await http().get(`/v1/llmstxt/${id}`).set(fleet);
    expect(got.status).toBe(200);
    expect(got.body.job).toMatchObject({ id, kind: 'llmstxt', status: 'done' });
    const text = got.body.llms_txt as string;
    expect(got.body.pages).toBe(results.length);
    const lines = text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['# Acme Widgets', '', '> Manuals and guides for Acme widgets.']);
    // Every page read, with its title and description, in its folder's section.
    for (const r of results) {
      const page = PAGES[new URL(r.url).pathname];
      expect(r.result!.title).toBe(page.title);
      if (page.description) expect(r.result!.metadata.description).toBe(page.description);
      const desc = r.result!.metadata.description;
      expect(lines).toContain(`- [${page.title}](${r.url})${desc ? `: ${desc}` : ''}`);
    }
    const sections = lines.filter((l) => l.startsWith('## '));
    expect(sections).toEqual(['## Pages', '## Docs', '## Api', '## Blog', '## Old']);
    // Each page's line sits under its section.
    const under = (section: string) => {
      const from = lines.indexOf(section) + 1;
      const to = lines.findIndex((l, i) => i > from && l.startsWith('## '));
      return lines.slice(from, to < 0 ? undefined : to).filter((l) => l.startsWith('- '));
    };
    expect(under('## Docs')).toHaveLength(2);
    expect(under('## Pages').map((l) => /\]\(([^)]+)\)/.exec(l)![1])).toEqual([
      fx.url('/'),
      fx.url('/about'),
    ]);

    const file = await http().get(`/v1/llmstxt/${id}/llms.txt`).set(fleet);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(file.text).toBe(text);

    const full = await http().get(`/v1/llmstxt/${id}/llms-full.txt`).set(fleet);
    expect(full.status).toBe(200);
    expect(full.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(full.text.startsWith('# Acme Widgets\n\n> Manuals and guides for Acme widgets.\n')).toBe(true);
    for (const r of results) {
      const page = PAGES[new URL(r.url).pathname];
      expect(full.text).toContain(`\n# ${page.title}\n\nSource: ${r.url}\n\n`);
      expect(full.text).toContain(page.words);
    }
    // A page's title is not written twice: its markdown's own first heading is left out.
    expect(full.text.split('# Installing a widget').length).toBe(2);
  });

  it("another caller's job, or a job of another kind, is not found", async () => {
    const { id } = await crawl({ url: fx.url('/'), limit: 2 }, '/v1/llmstxt');
    for (const path of [
      `/v1/llmstxt/${id}`,
      `/v1/llmstxt/${id}/llms.txt`,
      `/v1/llmstxt/${id}/llms-full.txt`,
    ]) {
      const r = await http().get(path).set(OTHER);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    const plain = await crawl({ url: fx.url('/'), limit: 2 });
    const r = await http().get(`/v1/llmstxt/${plain.id}/llms-full.txt`).set(fleet);
    expect(r.status).toBe(404);
  });

  it("Firecrawl's v1 route: maxUrls named in its refusals, the full text cut at the answer cap and saying so", async () => {
    const bad = await http()
      .post('/firecrawl/v1/llmstxt')
      .set(fleet)
      .send({ url: fx.url('/'), maxUrls: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false });
    expect(bad.body.error).toMatch(/^maxUrls must be a whole number/);
    const over = await http()
      .post('/firecrawl/v1/llmstxt')
      .set(fleet)
      .send({ url: fx.url('/'), maxUrls: 10_001 });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/^maxUrls 10001 is over the 10000 pages/);
    const other = await http()
      .post('/firecrawl/v1/llmstxt')
      .set(fleet)
      .send({ url: fx.url('/'), prompt: 'x' });
    expect([other.status, other.body.error]).toEqual([
      400,
      'prompt is not supported by this server (leave the field out)',
    ]);

    const sub = await http()
      .post('/firecrawl/v1/llmstxt')
      .set(fleet)
      .send({ url: fx.url('/'), maxUrls: 20, showFullText: true });
    expect(sub.status).toBe(200);
    const id = sub.body.id as string;
    await waitForJob(app, id);
    const got = await http().get(`/firecrawl/v1/llmstxt/${id}`).set(fleet);
    expect(got.body).toMatchObject({ success: true, status: 'completed' });
    const full = got.body.data.llmsfulltxt as string;
    expect(Buffer.byteLength(full)).toBeLessThan(1500 + 200);
    expect(full).toMatch(
      new RegExp(
        `\\n\\[cut at \\d+ bytes, this server's cap on one answer: GET /v1/llmstxt/${id}/llms-full.txt has every page\\]\\n$`,
      ),
    );
    // The whole file is there.
    const whole = await http().get(`/v1/llmstxt/${id}/llms-full.txt`).set(fleet);
    expect(Buffer.byteLength(whole.text)).toBeGreaterThan(1500);
    expect(whole.text.startsWith(full.slice(0, full.lastIndexOf('\n[cut at')))).toBe(true);
  });
});
