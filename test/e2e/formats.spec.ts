import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, waitForJob, fleet } from '../support/app';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { Fixture, html, send } from '../support/fixture';

/** Several formats from one fetch, and what each format holds. */

const para = (i: number) =>
  `<p>Paragraph ${i} of the harbour story. It has words enough to be read as the article, with <a href="/boat/${i}">a boat</a>, commas, and more words, so that it scores well.</p>`;
const article = (title: string) =>
  html(
    `<nav><a href="/">Home</a></nav><article><h1>${title}</h1>${[0, 1, 2].map(para).join('')}` +
      `<h1>Part two</h1>${[3, 4, 5].map(para).join('')}</article><footer>Footer text</footer>`,
    title,
  );
// Long digits (past 2^53), markup and a run of backticks inside a string.
const JSON_PAGE = '{"id":12345678901234567891,"note":"a <b> & ```c```","n":1.0}';

const RAW_PAGE = article('The café by the harbour').replace('<head>', '<head><!-- kept as served -->');

describe.each(BACKENDS)('formats on %s', (backend) => {
  let app: INestApplication;
  let fx: Fixture;
  let pg: { url: string; drop: () => Promise<void> } | undefined;
  const http = () => request(app.getHttpServer());
  const fetchIt = (body: object) =>
    http()
      .post('/v1/fetch')
      .set(fleet)
      .send(body)
      .then((r) => {
        if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
        return r.body;
      });

  beforeAll(async () => {
    const pages: Record<string, ReturnType<typeof send>> = {};
    for (const p of ['one', 'cached', 'batch-a', 'batch-b', 'capped'])
      pages[`/${p}`] = send(200, 'text/html', article(`The ${p} harbour story today`));
    fx = await new Fixture({
      ...pages,
      '/data.json': send(200, 'application/json', JSON_PAGE),
      // Served in windows-1252: raw_html is the page decoded, byte for byte otherwise.
      '/raw': send(200, 'text/html; charset=windows-1252', Buffer.from(RAW_PAGE, 'latin1')),
      // No article is found in it: the whole body is the content.
      '/tiny': send(
        200,
        'text/html',
        html('<h1>Tiny page</h1><img src="/x.png" alt="a picture">', 'Tiny page'),
      ),
    }).start();
    pg = backend === 'postgres' ? await createPgDatabase() : undefined;
    ({ app } = await createTestApp({
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      ...(pg ? { SIFT_DATABASE_URL: pg.url } : {}),
    }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
    await pg?.drop();
  });

  it('one upstream request gives every format, each as `format` alone gives it', async () => {
    const url = fx.url('/one');
    const all = await fetchIt({ url, formats: ['markdown', 'text', 'html', 'links'] });
    expect(fx.hitCount('/one')).toBe(1);
    expect(Object.keys(all.formats)).toEqual(['markdown', 'text', 'html']);
    expect(all.content).toBe('');
    expect(all.format).toBeUndefined();
    expect(all.bytes).toBe(
      ['markdown', 'text', 'html'].reduce((n, f) => n + Buffer.byteLength(all.formats[f]), 0),
    );
    expect(all.links).toContainEqual({ url: fx.url('/boat/0'), text: 'a boat' });
    // Each format fetched and extracted alone (max_age_s 0: anew) is the same text.
    for (const f of ['markdown', 'text', 'html']) {
      const alone = await fetchIt({ url, format: f, max_age_s: 0 });
      expect([f, alone.content]).toEqual([f, all.formats[f]]);
      expect(alone.formats).toBeUndefined();
    }
    const links = await fetchIt({ url, links: true, max_age_s: 0 });
    expect(all.links).toEqual(links.links);
    expect(fx.hitCount('/one')).toBe(5);
    // `format` and `formats` together: content is the format's, and its text counts in bytes too.
    const both = await fetchIt({ url, format: 'text', formats: ['markdown'] });
    expect(both).toMatchObject({ format: 'text', content: all.formats.text, cached: true });
    expect(both.formats).toEqual({ markdown: all.formats.markdown });
    expect(both.bytes).toBe(Buffer.byteLength(all.formats.text) + Buffer.byteLength(all.formats.markdown));
  });

  it('a cached page is answered in another format without fetching it again', async () => {
    const url = fx.url('/cached');
    const md = await fetchIt({ url, format: 'markdown' });
    expect(fx.hitCount('/cached')).toBe(1);
    const text = await fetchIt({ url, format: 'text' });
    const more = await fetchIt({ url, formats: ['html', 'text', 'links'] });
    expect(fx.hitCount('/cached')).toBe(1);
    expect([text.cached, more.cached]).toEqual([true, true]);
    expect(more.formats.text).toBe(text.content);
    expect(text.fetched_at).toBe(md.fetched_at);
    // The same texts as a fresh fetch and extraction give.
    const fresh = await fetchIt({ url, formats: ['markdown', 'text', 'html'], max_age_s: 0 });
    expect(fx.hitCount('/cached')).toBe(2);
    expect(fresh.formats).toEqual({ markdown: md.content, text: text.content, html: more.formats.html });
  });

  it('html is the article itself: no Readability wrapper', async () => {
    const r = await fetchIt({ url: fx.url('/one'), format: 'html' });
    expect(r.content).not.toMatch(/readability-page|class="page"/i);
    expect(r.content).toMatch(/^<article>/i);
  });

  it("the page's title heading is handled alike in every format, article found or not", async () => {
    for (const [path, title] of [
      ['/one', 'The one harbour story today'],
      ['/tiny', 'Tiny page'],
    ]) {
      const r = await fetchIt({ url: fx.url(path), formats: ['markdown', 'text', 'html'] });
      expect(r.title).toBe(title);
      // The title is in `title`, and not in the content of any format.
      for (const f of ['markdown', 'text', 'html'])
        expect([path, f, r.formats[f].includes(title)]).toEqual([path, f, false]);
    }
    const tiny = await fetchIt({ url: fx.url('/tiny'), format: 'markdown' });
    expect(tiny.content).toBe('![a picture](/x.png)');
    const r = await fetchIt({ url: fx.url('/one'), formats: ['markdown', 'text', 'html'] });
    // Another h1 of the article is a second-level heading in each.
    expect(r.formats.markdown).toContain('## Part two');
    expect(r.formats.html).toContain('<h2>Part two</h2>');
    expect(r.formats.text).toContain('\n\nPart two\n\n');
  });

  it('a JSON page: a fenced block in markdown, escaped <pre><code> in html, as served in text', async () => {
    const r = await fetchIt({ url: fx.url('/data.json'), formats: ['markdown', 'html', 'text'] });
    expect(fx.hitCount('/data.json')).toBe(1);
    expect(r.formats.text).toBe(JSON_PAGE);
    expect(r.formats.markdown).toBe(`\`\`\`\`json\n${JSON_PAGE}\n\`\`\`\``);
    expect(r.formats.html).toBe(
      '<pre><code class="language-json">{"id":12345678901234567891,"note":"a &lt;b&gt; &amp; ```c```","n":1.0}</code></pre>',
    );
    const md = await fetchIt({ url: fx.url('/data.json'), format: 'markdown' });
    expect(md.content).toBe(r.formats.markdown);
    expect(md.digest).not.toBe(r.digest);
  });

  it('raw_html is the page as served, decoded; kept only when asked, then from the cache', async () => {
    const url = fx.url('/raw');
    const md = await fetchIt({ url, format: 'markdown' });
    expect(md.content).toContain('Paragraph 0 of the harbour story');
    const raw = await fetchIt({ url, formats: ['raw_html', 'markdown'] });
    // The page as served: its comment, navigation and footer too, é decoded from windows-1252.
    expect(raw.formats.raw_html).toBe(RAW_PAGE);
    expect(raw.formats.markdown).toBe(md.content);
    expect(Object.keys(raw.formats)).toEqual(['raw_html', 'markdown']);
    expect(fx.hitCount('/raw')).toBe(2);
    const again = await fetchIt({ url, formats: ['raw_html'] });
    expect([again.cached, again.formats.raw_html, fx.hitCount('/raw')]).toEqual([true, RAW_PAGE, 2]);
    expect(again.bytes).toBe(Buffer.byteLength(RAW_PAGE));
    // Within the caller's cap (bytes of UTF-8: é is two).
    const cut = await fetchIt({ url, formats: ['raw_html'], max_bytes: 100 });
    const within = Buffer.from(RAW_PAGE).subarray(0, 100).toString();
    expect(cut).toMatchObject({ truncated: true, bytes: 100, formats: { raw_html: within } });
    // A JSON page's is its text as served.
    const json = await fetchIt({ url: fx.url('/data.json'), formats: ['raw_html'] });
    expect(json.formats.raw_html).toBe(JSON_PAGE);
  });

  it('the output cap is shared fairly by the formats, and the links fill what is left', async () => {
    const url = fx.url('/capped');
    const whole = await fetchIt({ url, formats: ['markdown', 'html'] });
    const cap = Buffer.byteLength(whole.formats.markdown) + 100;
    const r = await fetchIt({ url, formats: ['markdown', 'html', 'links'], max_bytes: cap });
    expect(r.truncated).toBe(true);
    expect(r.bytes).toBeLessThanOrEqual(cap);
    // Each got half of the cap: the markdown (the shorter) was cut too.
    for (const f of ['markdown', 'html']) {
      expect(Buffer.byteLength(r.formats[f])).toBeGreaterThan(cap / 2 - 4);
      expect(whole.formats[f].startsWith(r.formats[f])).toBe(true);
    }
    expect(r.links).toEqual([]);
  });

  it('batch targets take formats; each page is fetched once and its results count every format', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [
          { url: fx.url('/batch-a'), options: { formats: ['markdown', 'html', 'links'] } },
          { url: fx.url('/batch-b') },
        ],
        options: { formats: ['text', 'markdown'] },
      });
    expect(sub.status).toBe(202);
    const job = await waitForJob(app, sub.body.id);
    expect(job.status).toBe('done');
    const res = await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet);
    const [a, b] = res.body.results.map((x: { result: Record<string, any> }) => x.result);
    expect(Object.keys(a.formats)).toEqual(['markdown', 'html']);
    expect(a.links.length).toBeGreaterThan(0);
    expect(Object.keys(b.formats)).toEqual(['text', 'markdown']);
    expect(b.links).toBeUndefined();
    expect([fx.hitCount('/batch-a'), fx.hitCount('/batch-b')]).toEqual([1, 1]);
    const texts = [a.formats.markdown, a.formats.html, b.formats.text, b.formats.markdown];
    expect(job.nbytes).toBeGreaterThan(texts.reduce((n: number, t: string) => n + Buffer.byteLength(t), 0));
  });

  it('formats is validated: a 400 envelope naming it, and what is valid is taken', async () => {
    const ok = await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/one'), formats: ['links'] });
    expect([ok.status, ok.body.content, ok.body.formats]).toEqual([200, '', {}]);
    const bad = await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/one'), formats: ['pdf'] });
    expect(bad.body.error.message).toContain('markdown, text, html, raw_html, links');
    for (const formats of ['markdown', [], ['pdf'], ['text', 'text'], [1], ['markdown', null]]) {
      for (const [path, body] of [
        ['/v1/fetch', { url: fx.url('/one'), formats }],
        ['/v1/batch', { targets: [{ url: fx.url('/one'), options: { formats } }] }],
        ['/v1/batch', { targets: [{ url: fx.url('/one') }], options: { formats } }],
      ] as const) {
        const r = await http().post(path).set(fleet).send(body);
        expect([path, formats, r.status, r.body.error?.code]).toEqual([
          path,
          formats,
          400,
          'invalid_request',
        ]);
        expect(r.body.error.message).toContain('formats');
        expect(typeof r.body.error.hint).toBe('string');
      }
    }
  });
});
