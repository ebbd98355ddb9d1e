import * as fs from 'node:fs';
import * as http from 'node:http';
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createTestApp, FLEET_TOKEN, RESTRICTED_TOKEN, waitUntil, type TestApp } from '../support/app';
import { articleHtml, Fixture, send } from '../support/fixture';
import { call, everyTool, noPrivate, pagesJoin, site } from '../support/mcp-tools';
import {
  ensureBuilt,
  kill,
  loadedPackages,
  NODE_FLAGS,
  packagesProbe,
  ROOT,
  startSiftProcess,
  type SiftProcess,
} from '../support/process';

const MiB = 1024 * 1024;

/** A site whose /slow page answers only once `release` is called. */
async function heldSite(): Promise<{ slow: Fixture; release: () => void }> {
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  const slow = await new Fixture({
    '/slow': (req, res) => void held.then(() => send(200, 'text/html', articleHtml('Slow', 4))(req, res)),
  }).start();
  return { slow, release };
}

describe('MCP over Streamable HTTP', () => {
  let t: TestApp;
  let base: string;
  let fx: Fixture;
  const clients: Client[] = [];
  const connect = async (token: string) => {
    const c = new Client({ name: 'mcp-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    fx = await site().start();
    t = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_FLEET_FETCH_CONCURRENCY: '1' });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await t?.app.close();
    await fx?.stop();
  });

  it('lists the tools and calls each one', async () => everyTool(await connect(FLEET_TOKEN), fx), 30_000);

  it(
    'pages a 2 MB page by max_chars, the pages joining to the whole',
    async () => pagesJoin(await connect(FLEET_TOKEN), fx),
    30_000,
  );

  it(
    'a restricted token reaches no private address',
    async () => noPrivate(await connect(RESTRICTED_TOKEN)),
    30_000,
  );

  it("fetch holds one of the caller's places among fetches in flight, as /v1/fetch does", async () => {
    const { slow, release } = await heldSite();
    const c = await connect(FLEET_TOKEN);
    const first = call(c, 'fetch', { url: slow.url('/slow') });
    await waitUntil(() => slow.hitCount('/slow') || undefined, 'the first fetch to reach the site');
    const second = await call(c, 'map', { url: fx.url('/') });
    expect([second.isError, second.body.code]).toEqual([true, 'too_many_requests']);
    expect(second.body.message).toMatch(/already has 1 fetches in flight/);
    release();
    expect((await first).isError).toBe(false);
    expect((await call(c, 'fetch', { url: fx.url('/a') })).isError).toBe(false);
    await slow.stop();
  }, 30_000);

  it('a bad token is 401; GET and DELETE are 405; a foreign Origin or a non-loopback Host is 403', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(init),
      });
    const bad = await post({ authorization: 'Bearer wrong' });
    expect(bad.status).toBe(401);
    const auth = { authorization: `Bearer ${FLEET_TOKEN}` };
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${base}/mcp`, { method, headers: auth });
      expect([method, r.status, r.headers.get('allow')]).toEqual([method, 405, 'POST']);
    }
    expect((await post({ ...auth, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ ...auth, origin: 'http://localhost:3000' })).status).toBe(200);
    expect((await post(auth)).status).toBe(200);
    // sift listens on loopback: a Host that is not a loopback name (a DNS-rebound one) is refused.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${base}/mcp`,
        {
          method: 'POST',
          headers: {
            ...auth,
            host: 'rebound.example',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    expect(status).toBe(403);
  });
});

describe('MCP over Streamable HTTP: the POST rules, and servers lent again', () => {
  let t: TestApp;
  let base: string;
  let fx: Fixture;
  const rpc = (method: string, id?: number, params: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    ...(id === undefined ? {} : { id }),
    method,
    params,
  });
  const post = async (body: unknown, headers: Record<string, string> = {}, token = FLEET_TOKEN) => {
    const r = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
  };
  const fetchCall = (id: number, url: string) => rpc('tools/call', id, { name: 'fetch', arguments: { url } });
  const toolBody = (answer: Record<string, any>) =>
    answer.result.isError ? JSON.parse(answer.result.content[0].text) : answer.result.structuredContent;

  beforeAll(async () => {
    fx = await site().start();
    t = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_PDF_MAX_BYTES: String(2 * MiB) });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.app.close();
    await fx?.stop();
  });

  it('a message holds a file up to SIFT_PDF_MAX_BYTES in base64; a larger file is refused', async () => {
    const parseCall = (bytes: Buffer) =>
      rpc('tools/call', 1, {
        name: 'parse',
        arguments: { data: bytes.toString('base64'), filename: 'rows.csv', format: 'text' },
      });
    // 1.9 MB of CSV: a message of 2.5 MB, over the 1 MiB of a message without a file.
    const rows = Buffer.from(
      Array.from({ length: 38_000 }, (_, i) => `row ${i},${'x'.repeat(40)}\n`).join(''),
    );
    expect(rows.length).toBeGreaterThan(1.8 * MiB);
    const read = await post(parseCall(rows));
    expect(read.status).toBe(200);
    expect(read.body?.result.isError).toBeUndefined();
    expect(toolBody(read.body!)).toMatchObject({ url: 'upload:rows.csv', verdict: 'ok', truncated: true });
    expect(toolBody(read.body!).content).toContain('row 1\t');
    // Over the file cap but within the message's room: the tool's error, in /v1/parse's words.
    const over = await post(parseCall(Buffer.alloc(2 * MiB + 16 * 1024, 'a')));
    expect(toolBody(over.body!)).toMatchObject({ code: 'payload_too_large' });
    // A message past that room is not read.
    expect((await post(parseCall(Buffer.alloc(3 * MiB, 'a')))).status).toBe(413);
  }, 30_000);

  it('Accept, the protocol version, the message schema, notifications and lists answer as the MCP transport does', async () => {
    const notAcceptable = await post(rpc('tools/list', 1), { accept: 'application/json' });
    expect([notAcceptable.status, notAcceptable.body?.error.code]).toEqual([406, -32000]);
    const oldVersion = await post(rpc('tools/list', 1), { 'mcp-protocol-version': '1999-01-01' });
    expect([oldVersion.status, oldVersion.body?.error.message]).toEqual([
      400,
      expect.stringMatching(/Unsupported protocol version: 1999-01-01/),
    ]);
    const notRpc = await post({ hello: 'world' });
    expect([notRpc.status, notRpc.body?.error.code, notRpc.body?.id]).toEqual([400, -32700, null]);
    expect(await post(rpc('notifications/initialized'))).toEqual({ status: 202, body: undefined });
    const twoInits = await post([
      rpc('initialize', 1, {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      }),
      rpc('tools/list', 2),
    ]);
    expect([twoInits.status, twoInits.body?.error.code]).toEqual([400, -32600]);
    const both = await post([rpc('tools/list', 7), fetchCall(8, fx.url('/a'))]);
    expect(both.status).toBe(200);
    expect((both.body as unknown as Record<string, any>[]).map((m) => m.id)).toEqual([7, 8]);
    const [list, page] = both.body as unknown as Record<string, any>[];
    expect(list.result.tools.map((x: { name: string }) => x.name)).toContain('fetch');
    expect(toolBody(page).final_url).toBe(fx.url('/a'));
  }, 30_000);

  it("a server lent again answers each caller under the caller's own policy", async () => {
    for (let i = 0; i < 3; i++) {
      const fleet = await post(fetchCall(1, fx.url('/a')));
      expect(toolBody(fleet.body!).status).toBe(200);
      const restricted = await post(fetchCall(1, fx.url('/a')), {}, RESTRICTED_TOKEN);
      expect([restricted.body?.result.isError, toolBody(restricted.body!).code]).toEqual([
        true,
        'blocked_address',
      ]);
    }
  }, 30_000);

  it('a caller who hangs up mid-call leaves no answer for the next caller with the same id', async () => {
    const { slow, release } = await heldSite();
    const gone = new AbortController();
    const first = fetch(`${base}/mcp`, {
      method: 'POST',
      signal: gone.signal,
      headers: {
        authorization: `Bearer ${FLEET_TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(fetchCall(1, slow.url('/slow'))),
    }).catch((err: Error) => err);
    await waitUntil(() => slow.hitCount('/slow') || undefined, 'the first fetch to reach the site');
    gone.abort();
    expect(((await first) as Error).name).toBe('AbortError');
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(toolBody((await post(fetchCall(1, fx.url('/a')))).body!));
    release();
    for (let i = 0; i < 4; i++) answers.push(toolBody((await post(fetchCall(1, fx.url('/a')))).body!));
    expect(answers.map((a) => a.final_url)).toEqual(Array(8).fill(fx.url('/a')));
    await slow.stop();
  }, 30_000);
});

describe('sift mcp over stdio', () => {
  const TOKEN = 'mcp-stdio-token-0123456789';
  const RTOKEN = 'mcp-stdio-restricted-0123456789';
  let server: SiftProcess;
  let fx: Fixture;
  let dir: string;
  const clients: Client[] = [];
  const connect = async (token: string) => {
    const c = new Client({ name: 'mcp-test', version: '1.0.0' });
    await c.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [path.join(ROOT, 'dist', 'src', 'cli.js'), 'mcp'],
        env: { PATH: process.env.PATH ?? '', SIFT_URL: server.url, SIFT_TOKEN: token },
        stderr: 'pipe',
      }),
    );
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    ensureBuilt();
    fx = await site().start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-mcp-'));
    server = await startSiftProcess(
      {
        SIFT_DB: path.join(dir, 'sift.db'),
        SIFT_TOKENS: `${TOKEN}:mcp-fleet:fleet,${RTOKEN}:mcp-restricted:restricted`,
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
      },
      [...NODE_FLAGS, ...packagesProbe(dir)],
    );
  }, 180_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    if (server) await kill(server, 'SIGTERM');
    await fx?.stop();
  });

  it('lists the tools and calls each one', async () => everyTool(await connect(TOKEN), fx), 30_000);

  it(
    'pages a 2 MB page by max_chars, the pages joining to the whole',
    async () => pagesJoin(await connect(TOKEN), fx),
    30_000,
  );

  it('a restricted token reaches no private address', async () => noPrivate(await connect(RTOKEN)), 30_000);

  it('a bad token is a tool error (the API answered 401)', async () => {
    const r = await call(await connect('wrong-token'), 'fetch', { url: fx.url('/a') });
    expect([r.isError, r.body.code]).toEqual([true, 'unauthorized']);
  }, 30_000);

  it('the server holds no library loaded on first use until it is used; MCP loads on a POST /mcp', async () => {
    // The stdio tools above reach the server by its REST API only, with no cookies, changes,
    // selectors or sitemaps; its database is SQLite.
    const firstUse = [
      '@modelcontextprotocol/sdk',
      'zod',
      'ajv',
      'tough-cookie',
      'diff',
      'playwright-core',
      'pg',
      'htmlparser2',
      'css-select',
    ];
    expect((await loadedPackages(server)).filter((p) => firstUse.includes(p))).toEqual([]);
    const c = new Client({ name: 'mcp-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    clients.push(c);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('fetch');
    expect(await loadedPackages(server)).toEqual(
      expect.arrayContaining(['@modelcontextprotocol/sdk', 'zod']),
    );
  }, 30_000);

  it('sift mcp loads none of the server', () => {
    ensureBuilt();
    const out = execFileSync(process.execPath, [
      '-e',
      `require(${JSON.stringify(path.join(ROOT, 'dist', 'src', 'cli', 'mcp.js'))}); console.log(Object.keys(require.cache).filter((k) => /@nestjs|better-sqlite3|kysely/.test(k)).length)`,
    ]);
    expect(String(out).trim()).toBe('0');
  });
});
