import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { restCall } from '../../src/cli/mcp';
import { httpPort } from '../../src/mcp/http-port';
import { registerTools } from '../../src/mcp/tools';
import { createTestApp, FLEET_TOKEN, type TestApp } from '../support/app';
import { articleHtml, Fixture, send } from '../support/fixture';
import { badInputs, list } from '../support/bad-inputs';

/**
 * One validation for every surface (SPEC "Callers held apart on every surface"): an MCP tool and a
 * Firecrawl field accept nothing /v1 refuses, refuse it in /v1's words, and a value of the wrong
 * type is refused. A refused request never reaches the site it names.
 */

/** A site that counts every connection and request made to it, whatever the request's size. */
async function countingSite() {
  let contacts = 0;
  const server = http.createServer({ maxHeaderSize: 1 << 20 }, (_req, res) => res.end('counted'));
  server.on('connection', () => contacts++).on('request', () => contacts++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.2:${port}${path}`,
    contacts: () => contacts,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A tool's answer: its text parsed as JSON, or as it is (the SDK's own refusals are not JSON). */
async function call(c: Client, name: string, args: Record<string, unknown>) {
  const r = (await c.callTool({ name, arguments: args })) as {
    content: { text: string }[];
    isError?: boolean;
  };
  const text = r.content[0].text;
  let body: Record<string, any> | string = text;
  try {
    body = JSON.parse(text) as Record<string, any>;
  } catch {
    // Kept as text: the test shows it.
  }
  return { isError: r.isError === true, body: body as Record<string, any> };
}

const renamed = (message: string, names: [string, string][] = []) =>
  names.reduce((m, [from, to]) => m.split(from).join(to), message);

describe('one validation for /v1, the Firecrawl routes and the MCP tools', () => {
  let t: TestApp;
  let base: string;
  let upstream: Awaited<ReturnType<typeof countingSite>>;
  let site: Fixture;
  /** The MCP tools over Streamable HTTP (the services in process), and over sift's REST API (`sift mcp`). */
  const mcp: Record<string, Client> = {};
  const auth = { authorization: `Bearer ${FLEET_TOKEN}`, 'content-type': 'application/json' };

  const rest = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: auth,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    upstream = await countingSite();
    site = await new Fixture({ '/a': send(200, 'text/html', articleHtml('Alpha', 6)) }).start();
    t = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
    mcp.http = new Client({ name: 'one-validation', version: '1.0.0' });
    await mcp.http.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${FLEET_TOKEN}` } },
      }),
    );
    const server = new McpServer({ name: 'sift', version: 'test' });
    const port = httpPort(restCall({ base, headers: auth }));
    registerTools(server, () => port);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    mcp.rest = new Client({ name: 'one-validation', version: '1.0.0' });
    await mcp.rest.connect(clientSide);
  });
  afterAll(async () => {
    for (const c of Object.values(mcp)) await c.close();
    await t?.app.close();
    await upstream?.stop();
    await site?.stop();
  });
  // A refused request never reaches the site it names.
  let contactsBefore = 0;
  beforeEach(() => (contactsBefore = upstream.contacts()));
  afterEach(() => expect(upstream.contacts() - contactsBefore).toBe(0));

  it('the MCP fetch tool refuses 20,000 selectors as /v1 does', async () => {
    const include_selectors = list(20_000, (i) => `p.c${i}`);
    const r = await call(mcp.http, 'fetch', { url: upstream.url('/a'), include_selectors });
    const v1 = await rest('POST', '/v1/fetch', {
      url: upstream.url('/a'),
      include_selectors: include_selectors.slice(0, 21),
    });
    expect(r).toEqual({ isError: true, body: v1.body.error });
    expect(r.body).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^include_selectors /),
    });
  }, 30_000);

  it('the MCP fetch tool refuses a 200,000-character URL, which never reaches its site', async () => {
    const r = await call(mcp.http, 'fetch', { url: upstream.url(`/${'a'.repeat(200_000)}`) });
    // Compared field by field: a failure does not print the URL back.
    expect([r.isError, r.body.code, r.body.message]).toEqual([
      true,
      'invalid_request',
      'url must be shorter than or equal to 8192 characters',
    ]);
  }, 30_000);

  it('the MCP map tool refuses 2,000 globs, and 21 (the limit is 20)', async () => {
    for (const n of [2_000, 21]) {
      const r = await call(mcp.http, 'map', {
        url: upstream.url('/'),
        include_paths: list(n, (i) => `/g${i}/**`),
      });
      expect([n, r.isError, r.body.code, r.body.message]).toEqual([
        n,
        true,
        'invalid_request',
        'include_paths must contain no more than 20 elements',
      ]);
    }
  }, 30_000);

  it('/v2 refuses a Firecrawl field of the wrong type, naming it; a right one still scrapes', async () => {
    const scrape = (body: object) => rest('POST', '/v2/scrape', { url: upstream.url('/a'), ...body });
    for (const [body, named] of [
      [{ onlyMainContent: 'false' }, 'onlyMainContent must be a boolean value'],
      [{ formats: [{ type: 'screenshot', fullPage: 'yes' }] }, 'formats.0.fullPage must be a boolean value'],
      [{ formats: [5] }, "formats.0 must be a format's name or an object with a string type"],
      [{ formats: 'markdown' }, 'formats must be a list'],
      [{ maxAge: '60000' }, 'maxAge must be a number'],
    ] as const) {
      const r = await scrape(body);
      expect([body, r.status, r.body.success, r.body.error]).toEqual([
        body,
        400,
        false,
        expect.stringContaining(named),
      ]);
    }
    const crawl = await rest('POST', '/v2/crawl', {
      url: upstream.url('/'),
      scrapeOptions: { onlyMainContent: 'no' },
    });
    expect([crawl.status, crawl.body.error]).toEqual([
      400,
      expect.stringContaining('scrapeOptions.onlyMainContent must be a boolean value'),
    ]);
    const paths = await rest('POST', '/v2/crawl', { url: upstream.url('/'), includePaths: [5] });
    expect([paths.status, paths.body.error]).toEqual([
      400,
      expect.stringContaining('includePaths must be a string'),
    ]);
    const map = await rest('POST', '/v2/map', { url: upstream.url('/'), ignoreQueryParameters: 'true' });
    expect([map.status, map.body.error]).toEqual([
      400,
      expect.stringContaining('ignoreQueryParameters must be a boolean value'),
    ]);
    const batch = await rest('POST', '/v2/batch/scrape', { urls: [upstream.url('/a')], onlyMainContent: 0 });
    expect([batch.status, batch.body.error]).toEqual([
      400,
      expect.stringContaining('onlyMainContent must be a boolean value'),
    ]);
    const good = await rest('POST', '/v2/scrape', {
      url: site.url('/a'),
      onlyMainContent: true,
      formats: ['markdown', { type: 'links' }],
      maxAge: 0,
    });
    expect([good.status, good.body.data?.markdown]).toEqual([200, expect.stringContaining('Paragraph 0')]);
  }, 30_000);

  it('a field broken several ways is refused for one problem, its type before its size', async () => {
    const refusals = [
      await rest('POST', '/v1/fetch', { url: 123 }),
      await rest('POST', '/v1/fetch', { url: `http://a.test/${'x'.repeat(9000)}`, max_bytes: 'a lot' }),
      await rest('POST', '/v1/batch', { targets: 'http://a.test/' }),
      await rest('POST', '/v1/batch', { targets: [], on_restart: 'never' }),
    ];
    expect(refusals.map((r) => [r.status, r.body.error?.message])).toEqual([
      [400, 'url must be a string'],
      [400, 'url must be shorter than or equal to 8192 characters; max_bytes must be an integer number'],
      [400, 'targets must be an array'],
      [
        400,
        'targets must contain at least 1 elements; on_restart must be one of the following values: fail, retry, resume',
      ],
    ]);
  });

  it('a job over its size is refused with the caller class’s limit, on every surface', async () => {
    const crawl = await rest('POST', '/v1/crawl', { url: upstream.url('/'), limit: 200_000 });
    expect([crawl.status, crawl.body.error?.message]).toEqual([
      400,
      'limit 200000 is over the 10000 pages a fleet caller may crawl in one job',
    ]);
    const urls = Array.from({ length: 10_001 }, (_, i) => upstream.url(`/${i}`));
    const batch = await rest('POST', '/v1/batch', { targets: urls.map((url) => ({ url })) });
    const sent = { code: batch.body.error?.code, message: batch.body.error?.message };
    expect(sent).toEqual({
      code: 'too_many_targets',
      message: '10001 targets is over the 10000 a fleet caller may send in one job',
    });
    for (const client of Object.values(mcp)) {
      expect(await call(client, 'batch_submit', { urls })).toMatchObject({ isError: true, body: sent });
      expect(await call(client, 'crawl', { url: upstream.url('/'), limit: 200_000 })).toMatchObject({
        isError: true,
        body: { code: 'invalid_request', message: crawl.body.error?.message },
      });
    }
  }, 30_000);

  it('each bad input is refused by /v1, the Firecrawl route and the MCP tools, in the same words', async () => {
    // Every surface's answer to every row, against what /v1's refusal says it must be.
    const got: unknown[] = [];
    const want: unknown[] = [];
    for (const row of badInputs(upstream.url(''))) {
      const v1 = await rest(...row.v1);
      got.push([row.what, '/v1', v1.status, v1.body.error?.code]);
      want.push([row.what, '/v1', 400, 'invalid_request']);
      const { message, hint } = (v1.body.error ?? {}) as { message: string; hint: string };
      if (row.v2) {
        const [path, body, names] = row.v2;
        const v2 = await rest('POST', path, body);
        got.push([row.what, path, v2.status, v2.body]);
        want.push([
          row.what,
          path,
          400,
          { success: false, error: `${renamed(message, names)} (${hint})`, code: 'invalid_request' },
        ]);
      }
      if (row.mcp) {
        const [tool, args, names] = row.mcp;
        for (const [how, client] of Object.entries(mcp)) {
          got.push([row.what, `MCP ${how} ${tool}`, await call(client, tool, args)]);
          want.push([
            row.what,
            `MCP ${how} ${tool}`,
            { isError: true, body: { code: 'invalid_request', message: renamed(message, names), hint } },
          ]);
        }
      }
    }
    expect(got).toEqual(want);
  }, 60_000);
});
