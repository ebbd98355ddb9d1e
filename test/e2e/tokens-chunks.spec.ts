import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { encode } from '../support/o200k';
import { createTestApp, fleet, waitForJob } from '../support/app';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { Fixture, html, send } from '../support/fixture';

/** Tokens on every envelope, `max_tokens`, and the "chunks" format, through the API. */

/** The tokenizer library's own count, special-token spellings read as text. */
const theirs = (s: string) => encode(s).length;

const para = (k: number) =>
  `<p>Paragraph ${k} of the handbook: the harbour's boats are counted at dawn, then the nets, then the crates of fish sold on the quay before eight.</p>`;
/** About 20,000 tokens of article. */
const LONG = html(
  `<article><h1>The long handbook</h1>${[...Array(640).keys()].map(para).join('')}</article>`,
  'Long',
);
/** Three heading levels under the title (an h1 in the article would repeat it), long enough to split at 200 tokens. */
const DOCS = html(
  '<article><h2>Guide</h2>' +
    [...Array(3).keys()].map(para).join('') +
    '<h3>Install</h3>' +
    [...Array(20).keys()].map(para).join('') +
    '<h4>On Linux</h4>' +
    [...Array(12).keys()].map(para).join('') +
    '<h3>Use</h3>' +
    [...Array(4).keys()].map(para).join('') +
    '</article>',
  'Sift docs',
);

describe.each(BACKENDS)('tokens and chunks on %s', (backend) => {
  let app: INestApplication;
  let fx: Fixture;
  let pg: { url: string; drop: () => Promise<void> } | undefined;
  const http = () => request(app.getHttpServer());
  const fetchIt = async (body: object) => {
    const r = await http().post('/v1/fetch').set(fleet).send(body);
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    return r.body;
  };

  beforeAll(async () => {
    fx = await new Fixture({
      '/long': send(200, 'text/html', LONG),
      '/docs': send(200, 'text/html', DOCS),
      '/data.json': send(200, 'application/json', '{"a":"<|endoftext|>","b":[1,2,3]}'),
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

  it("tokens: true counts the content's tokens as the library does and names the encoding; unasked, nothing is counted", async () => {
    const plain = await fetchIt({ url: fx.url('/long') });
    expect([plain.metadata.tokens, plain.metadata.tokenizer]).toEqual([undefined, undefined]);
    const whole = await fetchIt({ url: fx.url('/long'), tokens: true });
    expect(whole.metadata.tokenizer).toBe('o200k_base');
    expect(whole.metadata.tokens).toBe(theirs(whole.content));
    expect(whole.metadata.tokens).toBeGreaterThan(20_000);
    expect([whole.truncated, whole.content]).toEqual([false, plain.content]);
    // From the cache, in another format; a JSON page as served.
    const text = await fetchIt({ url: fx.url('/long'), format: 'text', tokens: true });
    expect([text.cached, text.metadata.tokens]).toEqual([true, theirs(text.content)]);
    const json = await fetchIt({ url: fx.url('/data.json'), format: 'text', tokens: true });
    expect(json.metadata.tokens).toBe(theirs(json.content));
  });

  it('max_tokens 1,000 on a 20,000-token page: at most 1,000 tokens, truncated; with max_bytes the first cap binds', async () => {
    const cut = await fetchIt({ url: fx.url('/long'), max_tokens: 1000 });
    expect(cut.truncated).toBe(true);
    expect(cut.metadata.tokens).toBe(theirs(cut.content));
    expect(cut.metadata.tokens).toBeLessThanOrEqual(1000);
    expect(cut.metadata.tokens).toBeGreaterThan(990);
    const whole = await fetchIt({ url: fx.url('/long'), tokens: true });
    expect(whole.content.startsWith(cut.content)).toBe(true);
    expect(cut.digest).not.toBe(whole.digest);
    // Shared between content and the texts of formats, as bytes are.
    const shared = await fetchIt({
      url: fx.url('/long'),
      format: 'markdown',
      formats: ['text'],
      max_tokens: 1000,
    });
    const both = theirs(shared.content) + theirs(shared.formats.text);
    expect(both).toBeLessThanOrEqual(1000);
    expect(both).toBeGreaterThan(980);
    // The byte cap binds first: tokens are of what is sent.
    const bytes = await fetchIt({ url: fx.url('/long'), max_tokens: 1000, max_bytes: 300 });
    expect(Buffer.byteLength(bytes.content)).toBeLessThanOrEqual(300);
    expect([bytes.truncated, bytes.metadata.tokens]).toEqual([true, theirs(bytes.content)]);
    // A cap that cuts nothing.
    const roomy = await fetchIt({ url: fx.url('/long'), max_tokens: 100_000 });
    expect([roomy.truncated, roomy.content, roomy.metadata.tokens]).toEqual([
      false,
      whole.content,
      whole.metadata.tokens,
    ]);
  });

  it('chunks: at most chunk_tokens each, joined the markdown, heading paths of three levels, ids that hold', async () => {
    const body = { url: fx.url('/docs'), formats: ['markdown', 'chunks'], chunk_tokens: 200 };
    const first = await fetchIt(body);
    const chunks: { id: string; heading_path: string[]; text: string; tokens: number }[] =
      first.formats.chunks;
    expect(chunks.map((c) => c.text).join('')).toBe(first.formats.markdown);
    for (const c of chunks) {
      expect(c.tokens).toBe(theirs(c.text));
      expect(c.tokens).toBeLessThanOrEqual(200);
    }
    const paths = [...new Set(chunks.map((c) => c.heading_path.join(' > ')))];
    expect(paths).toEqual(['Guide', 'Guide > Install', 'Guide > Install > On Linux', 'Guide > Use']);
    expect(
      chunks.filter((c) => c.heading_path.length === 2 && c.heading_path[1] === 'Install').length,
    ).toBeGreaterThan(1);
    // Cached, and fetched anew: the same pieces with the same ids.
    const cached = await fetchIt(body);
    const fresh = await fetchIt({ ...body, max_age_s: 0 });
    expect(cached.cached).toBe(true);
    expect(fresh.cached).toBe(false);
    expect(cached.formats.chunks).toEqual(chunks);
    expect(fresh.formats.chunks.map((c: { id: string }) => c.id)).toEqual(chunks.map((c) => c.id));
    // The default is 512 tokens a piece; overlap keeps each within chunk_tokens.
    const wide = await fetchIt({ url: fx.url('/docs'), formats: ['chunks'] });
    expect(wide.formats.chunks.length).toBeLessThan(chunks.length);
    expect(Math.max(...wide.formats.chunks.map((c: { tokens: number }) => c.tokens))).toBeLessThanOrEqual(
      512,
    );
    const over = await fetchIt({ ...body, chunk_overlap: 50 });
    for (const c of over.formats.chunks) expect(c.tokens).toBeLessThanOrEqual(200);
    expect(over.formats.chunks.map((c: { text: string }) => c.text).join('').length).toBeGreaterThan(
      first.formats.markdown.length,
    );
  });

  it('a batch of chunks: in results and NDJSON like any format', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [{ url: fx.url('/docs') }, { url: fx.url('/long'), options: { max_tokens: 500 } }],
        options: { formats: ['chunks'], chunk_tokens: 256 },
      });
    expect(sub.status).toBe(202);
    const job = await waitForJob(app, sub.body.id);
    expect(job.status).toBe('done');
    const nd = await http()
      .get(`/v1/batch/${sub.body.id}/results`)
      .set(fleet)
      .set('Accept', 'application/x-ndjson');
    const [docs, long] = nd.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).result);
    expect(docs.formats.chunks.length).toBeGreaterThan(2);
    expect(docs.formats.chunks[0].heading_path).toEqual(['Guide']);
    const tokens = long.formats.chunks.reduce((n: number, c: { tokens: number }) => n + c.tokens, 0);
    expect(long.truncated).toBe(true);
    expect(tokens).toBeLessThanOrEqual(500);
    expect(tokens).toBeGreaterThan(400);
  });

  it("Firecrawl's /v2/scrape takes chunks as sift's own format, the document's `chunks`", async () => {
    const r = await http()
      .post('/v2/scrape')
      .set(fleet)
      .send({ url: fx.url('/docs'), formats: ['markdown', { type: 'chunks', chunkTokens: 200 }] });
    expect([r.status, r.body.success]).toEqual([200, true]);
    const chunks: { text: string; tokens: number; heading_path: string[] }[] = r.body.data.chunks;
    expect(chunks.map((c) => c.text).join('')).toBe(r.body.data.markdown);
    expect(Math.max(...chunks.map((c) => c.tokens))).toBeLessThanOrEqual(200);
    expect(chunks[0].heading_path).toEqual(['Guide']);
    const bad = await http()
      .post('/v2/scrape')
      .set(fleet)
      .send({ url: fx.url('/docs'), formats: [{ type: 'chunks', chunkTokens: 10 }] });
    expect([bad.status, bad.body.success]).toEqual([400, false]);
    expect(bad.body.error).toContain('chunkTokens');
  });

  it('bad token and chunk options are 400s that name the field', async () => {
    for (const [bad, field] of [
      [{ max_tokens: 0 }, 'max_tokens'],
      [{ max_tokens: 'many' }, 'max_tokens'],
      [{ chunk_tokens: 10 }, 'chunk_tokens'],
      [{ chunk_tokens: 100_000 }, 'chunk_tokens'],
      [{ chunk_overlap: 300 }, 'chunk_overlap'],
      [{ chunk_tokens: 100, chunk_overlap: 51 }, 'chunk_overlap'],
      [{ chunk_overlap: -1 }, 'chunk_overlap'],
      [{ tokens: 'yes' }, 'tokens'],
    ] as const) {
      const r = await http()
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: fx.url('/docs'), formats: ['chunks'], ...bad });
      expect([bad, r.status, r.body.error?.code]).toEqual([bad, 400, 'invalid_request']);
      expect(r.body.error.message).toContain(field);
      expect(typeof r.body.error.hint).toBe('string');
    }
  });
});
