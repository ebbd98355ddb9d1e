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
import { ensureBuilt, kill, ROOT, startSiftProcess, type SiftProcess } from '../support/process';

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
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const slow = await new Fixture({
      '/slow': (req, res) => void held.then(() => send(200, 'text/html', articleHtml('Slow', 4))(req, res)),
    }).start();
    const c = await connect(FLEET_TOKEN);
    const first = call(c, 'fetch', { url: slow.url('/slow') });
    await waitUntil(() => slow.hitCount('/slow') || undefined, 'the first fetch to reach the site');
    const second = await call(c, 'map', { url: fx.url('/') });
    expect([second.isError, second.body.code]).toEqual([true, 'too_many_requests']);
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
    server = await startSiftProcess({
      SIFT_DB: path.join(dir, 'sift.db'),
      SIFT_TOKENS: `${TOKEN}:mcp-fleet:fleet,${RTOKEN}:mcp-restricted:restricted`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
    });
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

  it('sift mcp loads none of the server', () => {
    ensureBuilt();
    const out = execFileSync(process.execPath, [
      '-e',
      `require(${JSON.stringify(path.join(ROOT, 'dist', 'src', 'cli', 'mcp.js'))}); console.log(Object.keys(require.cache).filter((k) => /@nestjs|better-sqlite3|kysely/.test(k)).length)`,
    ]);
    expect(String(out).trim()).toBe('0');
  });
});
