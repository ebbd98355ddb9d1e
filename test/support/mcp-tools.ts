// The MCP tools as an agent calls them, over any transport: the checks test/e2e/mcp.spec.ts runs
// over Streamable HTTP and over stdio.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { encode } from './o200k';
import { waitUntil } from './wait';
import { articleHtml, Fixture, html, send, slowArticle } from './fixture';
import { deck, wordFile } from './office-files';

const TOOLS = [
  'batch_results',
  'batch_status',
  'batch_submit',
  'cancel',
  'crawl',
  'fetch',
  'map',
  'monitor_create',
  'monitor_list',
  'monitor_runs',
  'parse',
  'search',
];

type CallResult = {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, any>;
  isError?: boolean;
};

/**
 * A tool's answer: its structuredContent, whose text content is the same answer as JSON (fetch, parse:
 * the content itself, plain markdown); an error's, its one text content parsed as JSON.
 */
export async function call(c: Client, name: string, args: Record<string, unknown>) {
  const r = (await c.callTool({ name, arguments: args })) as CallResult;
  expect(r.content).toHaveLength(1);
  if (r.isError) return { isError: true, body: JSON.parse(r.content[0].text) as Record<string, any> };
  const body = r.structuredContent!;
  expect(body).toEqual(expect.any(Object));
  if (name === 'fetch' || name === 'parse') expect(r.content[0].text).toBe(body.content);
  else expect(JSON.parse(r.content[0].text)).toEqual(body);
  return { isError: false, body };
}

/** Each tool's structuredContent checked against its outputSchema as listed, by the SDK's own validator. */
export async function outputsValidate(c: Client, calls: [string, Record<string, unknown>][]): Promise<void> {
  const tools = (await c.listTools()).tools;
  const ajv = new AjvJsonSchemaValidator();
  for (const [name, args] of calls) {
    const schema = tools.find((t) => t.name === name)!.outputSchema!;
    expect([name, schema.type]).toEqual([name, 'object']);
    const r = (await c.callTool({ name, arguments: args })) as CallResult;
    const checked = ajv.getValidator(schema)(r.structuredContent);
    expect([name, checked.valid, checked.errorMessage]).toEqual([name, true, undefined]);
    // Something that is not the answer does not pass.
    expect(ajv.getValidator(schema)({ nothing: 1 }).valid).toBe(false);
  }
}

const HOME =
  '<article><h1>Home</h1><p>Home, linking to alpha and bravo.</p><a href="/a">a</a> <a href="/b">b</a></article>';

/**
 * The fixture site: an article, a ~2 MB page (with characters outside the BMP), a page with links,
 * a page served after 2 s.
 */
export function site(): Fixture {
  const big = Array.from(
    { length: 18_000 },
    (_, i) =>
      `<p>Paragraph ${i} 🦊 of the long page, with enough words to count as content for the extractor here.</p>`,
  ).join('');
  return new Fixture({
    '/a': send(200, 'text/html', articleHtml('Alpha', 8)),
    '/b': send(200, 'text/html', articleHtml('Bravo', 8)),
    '/big': send(200, 'text/html', html(`<article><h1>Big</h1>${big}</article>`, 'Big')),
    '/': send(200, 'text/html', html(HOME, 'Home')),
    // A crawl's seed that takes its time: a cancel lands while the crawl still runs.
    '/slow': slowArticle(2000),
  });
}

/** Every tool once against the fixture, as a fleet caller (127.0.0.0/8 allowed). */
export async function everyTool(c: Client, fx: Fixture): Promise<void> {
  const tools = (await c.listTools()).tools;
  expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
  for (const t of tools) {
    expect(t.inputSchema.type).toBe('object');
    expect(t.annotations?.readOnlyHint).toBe(
      [
        'fetch',
        'map',
        'batch_status',
        'batch_results',
        'monitor_list',
        'monitor_runs',
        'search',
        'parse',
      ].includes(t.name),
    );
  }
  expect(tools.find((t) => t.name === 'cancel')?.annotations?.destructiveHint).toBe(true);

  const f = await call(c, 'fetch', { url: fx.url('/a') });
  expect(f.isError).toBe(false);
  expect(f.body.content).toContain('Paragraph 3 of the article');
  expect(f.body.content.startsWith('{')).toBe(false);
  expect(f.body.next_offset).toBeNull();
  expect(f.body.metadata.tokens).toBe(encode(f.body.content).length);
  // With changes: the content as before, and the page against this caller's previous fetch of it.
  const seen = [];
  for (let i = 0; i < 2; i++) {
    const t = await call(c, 'fetch', { url: fx.url('/a'), changes: true, max_age_s: 0 });
    expect(t.body.content).toContain('Paragraph 3 of the article');
    seen.push(t.body.changes.status);
  }
  expect(seen[1]).toBe('same');

  // A file sent in base64: read as POST /v1/parse reads it, its type told by its name.
  const word = await call(c, 'parse', {
    data: (await wordFile()).toString('base64'),
    filename: 'report.docx',
  });
  expect(word.isError).toBe(false);
  expect(word.body).toMatchObject({ url: 'upload:report.docx', verdict: 'ok', cached: false });
  expect(word.body.content).toMatch(/^# Field Report$/m);
  expect(word.body.metadata.tokens).toBe(encode(word.body.content).length);
  // A deck's slides chosen by pages, in base64url with line breaks as some encoders write them.
  const slides = deck().toString('base64url').replace(/.{76}/g, '$&\n');
  const two = await call(c, 'parse', { data: slides, pages: '2,4', format: 'markdown' });
  expect([...two.body.content.matchAll(/<!-- slide (\d) -->/g)].map((m) => m[1])).toEqual(['2', '4']);
  expect(two.body).toMatchObject({ truncated: true, metadata: { pages: 5 } });
  for (const [args, words] of [
    [{ data: 'not base64!' }, 'data: not base64'],
    [{ data: '' }, 'data: the file is empty'],
    [{ data: deck().toString('base64'), pages: 'two' }, 'pages'],
  ] as const) {
    const bad = await call(c, 'parse', args);
    expect([bad.isError, bad.body.code]).toEqual([true, 'invalid_request']);
    expect(bad.body.message).toContain(words);
  }

  // A monitor: created, listed, its runs read; its rules are the REST API's, in its words.
  const mon = await call(c, 'monitor_create', { name: 'tool', urls: [fx.url('/a')], every_s: 86400 });
  expect([mon.isError, mon.body.every_s, mon.body.urls]).toEqual([false, 86400, [fx.url('/a')]]);
  const listed = await call(c, 'monitor_list', {});
  expect(listed.body.monitors.map((x: { id: string }) => x.id)).toContain(mon.body.id);
  expect((await call(c, 'monitor_runs', { id: mon.body.id })).body.runs).toEqual(expect.any(Array));
  const often = await call(c, 'monitor_create', { name: 'x', urls: [fx.url('/a')], every_s: 1 });
  expect([often.isError, often.body.code]).toEqual([true, 'invalid_request']);
  expect(often.body.message).toContain('more often');
  const none = await call(c, 'monitor_runs', { id: 'no-such-monitor' });
  expect([none.isError, none.body.code]).toEqual([true, 'not_found']);

  const m = await call(c, 'map', { url: fx.url('/'), sitemap: 'skip' });
  expect(m.body.links.map((l: { url: string }) => l.url)).toEqual(
    expect.arrayContaining([fx.url('/a'), fx.url('/b')]),
  );

  const b = await call(c, 'batch_submit', { urls: [fx.url('/a'), fx.url('/b')], format: 'text' });
  expect(b.isError).toBe(false);
  let status: Record<string, any> = {};
  await waitUntil(async () => {
    status = (await call(c, 'batch_status', { id: b.body.id })).body;
    return status.status === 'done' || undefined;
  }, 'the batch to end');
  const r1 = await call(c, 'batch_results', { id: b.body.id, limit: 1 });
  expect(r1.body.results).toHaveLength(1);
  expect(r1.body.results[0].result.content).toContain('Paragraph 0 of the article');
  const r2 = await call(c, 'batch_results', { id: b.body.id, cursor: r1.body.next, limit: 1 });
  expect([r2.body.results[0].idx, r2.body.next]).toEqual([1, null]);

  // The batch's pages found again by their words.
  const found = await call(c, 'search', { query: 'paragraph article', jobs: [b.body.id] });
  expect(found.body.hits.map((h: { url: string }) => h.url).sort()).toEqual([fx.url('/a'), fx.url('/b')]);
  expect(found.body.hits[0]).toMatchObject({ job_id: b.body.id, snippet: expect.any(String) });
  const noWord = await call(c, 'search', { query: '!!!' });
  expect([noWord.isError, noWord.body.code]).toEqual([true, 'invalid_request']);

  // A crawl whose seed takes 2 s: one of three pages on loopback could end before the cancel.
  const cr = await call(c, 'crawl', { url: fx.url('/slow'), limit: 3, sitemap: 'skip' });
  expect(cr.isError).toBe(false);
  const x = await call(c, 'cancel', { id: cr.body.id });
  // The error's body is shown when it fails.
  expect({ isError: x.isError, error: x.isError ? x.body : undefined }).toEqual({
    isError: false,
    error: undefined,
  });
  expect(['cancelled', 'cancelling']).toContain(x.body.status);

  await outputsValidate(c, [
    ['fetch', { url: fx.url('/a') }],
    ['parse', { data: deck().toString('base64') }],
    ['map', { url: fx.url('/'), sitemap: 'skip' }],
    ['batch_status', { id: b.body.id }],
    ['batch_results', { id: b.body.id }],
    ['cancel', { id: cr.body.id }],
    ['monitor_list', {}],
    ['monitor_runs', { id: mon.body.id }],
    ['search', { query: 'paragraph', jobs: [b.body.id] }],
  ]);

  const missing = await call(c, 'batch_status', { id: 'no-such-job' });
  expect(missing).toEqual({
    isError: true,
    body: { code: 'not_found', message: expect.any(String), hint: expect.any(String) },
  });
}

/** The ~2 MB page, max_chars at a time: the pages join to the whole content. */
export async function pagesJoin(c: Client, fx: Fixture): Promise<void> {
  let offset: number | null = 0;
  const parts: string[] = [];
  let total = 0;
  while (offset !== null) {
    const { body } = await call(c, 'fetch', { url: fx.url('/big'), max_chars: 500_000, offset });
    expect(body.content.length).toBeLessThanOrEqual(500_000);
    parts.push(body.content);
    total = body.total_chars;
    offset = body.next_offset;
  }
  expect(total).toBeGreaterThan(1_700_000);
  expect(parts.length).toBeGreaterThan(2);
  const whole = parts.join('');
  expect(whole.length).toBe(total);
  expect(whole).toContain('Paragraph 17999 🦊');
  for (const p of parts) expect(/[\uD800-\uDBFF]$/.test(p)).toBe(false);

  // By tokens: each page at most max_tokens (o200k_base), and they join to the same whole.
  const byTokens: string[] = [];
  offset = 0;
  while (offset !== null && byTokens.length < 200) {
    const { body } = await call(c, 'fetch', { url: fx.url('/big'), max_tokens: 120_000, offset });
    expect(encode(body.content).length).toBeLessThanOrEqual(120_000);
    byTokens.push(body.content);
    offset = body.next_offset;
  }
  expect(byTokens.length).toBeGreaterThan(3);
  expect(byTokens.join('')).toBe(whole);
}

/** A restricted token reaches no private address through any tool: a site of its own is never hit. */
export async function noPrivate(c: Client): Promise<void> {
  const fx = await site().start();
  for (const [name, args] of [
    ['fetch', { url: fx.url('/a') }],
    ['map', { url: fx.url('/') }],
  ] as const) {
    const r = await call(c, name, args);
    expect([name, r.isError, r.body.code]).toEqual([name, true, 'blocked_address']);
  }
  for (const name of ['batch_submit', 'crawl'] as const) {
    const r = await call(c, name, name === 'crawl' ? { url: fx.url('/') } : { urls: [fx.url('/a')] });
    if (r.isError) {
      expect(r.body.code).toBe('blocked_address');
      continue;
    }
    await waitUntil(
      async () =>
        ['done', 'partial', 'failed'].includes(
          (await call(c, 'batch_status', { id: r.body.id })).body.status,
        ) || undefined,
      'the job to end',
    );
    const res = await call(c, 'batch_results', { id: r.body.id });
    expect(res.body.results.map((t: any) => [t.status, t.error?.code])).toEqual([
      ['failed', 'blocked_address'],
    ]);
  }
  expect(fx.hitCount('/a') + fx.hitCount('/')).toBe(0);
  await fx.stop();
}
