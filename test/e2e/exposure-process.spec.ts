import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { fingerprint } from '../../src/api/auth.guard';
import { openDcache } from '../../src/dcache';
import {
  connects,
  ensureBuilt,
  freePort,
  kill,
  rssOf,
  sift,
  startSiftProcess,
  type SiftProcess,
} from '../support/process';

const STRONG = 'strong-token-0123456789abcdefghij';

function tmpDb(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-exposure-')), 'sift.db');
}

/** Runs the server until it exits (start-up refused) or answers (it started); returns its exit code and output. */
async function startOrExit(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [ensureBuilt()], {
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 20_000);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  return { code, out };
}

/** What the server's own process shows: binding, file modes, start-up refusals, memory under a body bomb. */
describe('exposure and abuse in the real process', () => {
  let server: SiftProcess;
  let db: string;

  beforeAll(async () => {
    db = tmpDb();
    server = await startSiftProcess({ SIFT_DB: db, SIFT_TOKENS: `${STRONG}:ops:fleet` });
  }, 120_000);

  afterAll(() => kill(server, 'SIGTERM'));

  it('an unauthenticated gzip body bomb is refused without being inflated (RSS grows < 20 MB)', async () => {
    // 30 MB of `[{},{},…]` gzips to about 30 KB.
    const json = `[${'{},'.repeat(10_000_000)}{}]`;
    const bomb = zlib.gzipSync(json, { level: 9 });
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(json.length).toBeGreaterThan(29_000_000);
    const send = (auth?: string) =>
      fetch(`${server.url}/v1/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          ...(auth ? { authorization: `Bearer ${auth}` } : {}),
        },
        body: bomb,
      });
    // Settle the process first: the first requests load code paths of their own.
    for (let i = 0; i < 3; i++) expect((await send()).status).toBe(401);
    const before = rssOf(server.child.pid!);
    for (let i = 0; i < 5; i++) {
      const r = await send();
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    // Authenticated, the encoded body is still not inflated: 415.
    const r = await send(STRONG);
    expect(r.status).toBe(415);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('unsupported_encoding');
    const grown = rssOf(server.child.pid!) - before;
    expect(grown).toBeLessThan(20 * 1024 * 1024);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('binds 127.0.0.1 by default: the port is not reachable on another address', async () => {
    const port = Number(new URL(server.url).port);
    expect(await connects('127.0.0.1', port)).toBe(true);
    // 127.0.0.2 reaches this machine too, but not a socket bound to 127.0.0.1 alone.
    expect(await connects('127.0.0.2', port)).toBe(false);
    expect(server.output()).toContain(`listening on 127.0.0.1:${port}`);
  });

  it('creates the database, its -wal and its -shm with mode 0600', async () => {
    // A write makes sure the WAL exists.
    const r = await fetch(`${server.url}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${STRONG}` },
      body: JSON.stringify({ targets: [{ url: 'http://127.0.0.1:1/' }] }),
    });
    expect(r.status).toBe(202);
    for (const f of [db, `${db}-wal`, `${db}-shm`]) {
      expect([path.basename(f), (fs.statSync(f).mode & 0o777).toString(8)]).toEqual([
        path.basename(f),
        '600',
      ]);
    }
  });

  it('refuses to bind beyond loopback with the development token or a short token (exit 1)', async () => {
    const dev = await startOrExit({
      SIFT_DB: tmpDb(),
      SIFT_HOST: '0.0.0.0',
      SIFT_TOKENS: 'dev-token:dev:fleet',
    });
    expect(dev.code).toBe(1);
    expect(dev.out).toMatch(/SIFT_HOST=0\.0\.0\.0/);
    expect(dev.out).toContain('development token');
    const short = await startOrExit({
      SIFT_DB: tmpDb(),
      SIFT_HOST: '::',
      SIFT_TOKENS: 'short-token-1234:bob:restricted',
    });
    expect(short.code).toBe(1);
    expect(short.out).toMatch(/SIFT_HOST=::.*caller "bob"/);
  }, 60_000);

  it('refuses to start when a caller name has two classes across SIFT_TOKENS and the clients table', async () => {
    const file = tmpDb();
    const d = await openDcache({ path: file });
    await d.clients.addClient({
      fingerprint: fingerprint('x'.repeat(40)),
      caller: 'bob',
      callerClass: 'restricted',
      createdAt: 1,
    });
    await d.close();
    const out = await startOrExit({ SIFT_DB: file, SIFT_TOKENS: `${STRONG}:bob:fleet` });
    expect(out.code).toBe(1);
    expect(out.out).toMatch(/caller "bob" is both fleet and restricted/);
  }, 60_000);

  it('refuses to start with no token at all (every request would be 401); a created one is enough', async () => {
    const file = tmpDb();
    // A .env that sets only what its user needed: no SIFT_TOKENS.
    const none = await startOrExit({ SIFT_DB: file, SIFT_FLEET_ALLOW: '127.0.0.0/8' });
    expect(none.code).toBe(1);
    expect(none.out).toMatch(
      /no token is configured .*every request would be 401.*SIFT_TOKENS.*token create/,
    );
    const made = await sift(['token', 'create', 'alice', '--class', 'fleet'], {
      SIFT_DB: file,
      SIFT_TOKENS: '',
    });
    expect(made.code).toBe(0);
    const p = await startSiftProcess({ SIFT_DB: file });
    const ok = await fetch(`${p.url}/v1/batch`, { headers: { authorization: `Bearer ${made.out.trim()}` } });
    expect(ok.status).toBe(200);
    await kill(p, 'SIGTERM');
  }, 60_000);

  it('token create refuses a caller name in use with another class; the same class is fine', async () => {
    const env = { SIFT_DB: tmpDb(), SIFT_TOKENS: `${STRONG}:bob:fleet` };
    const clash = await sift(['token', 'create', 'bob', '--class', 'restricted'], env);
    expect(clash.code).toBe(2);
    expect(clash.err).toMatch(/refused: caller "bob" is both fleet and restricted/);
    expect(clash.out).toBe('');
    const same = await sift(['token', 'create', 'bob', '--class', 'fleet'], env);
    expect(same.code).toBe(0);
    const again = await sift(['token', 'create', 'carol', '--class', 'restricted'], env);
    expect(again.code).toBe(0);
    const carolFleet = await sift(['token', 'create', 'carol', '--class', 'fleet'], env);
    expect(carolFleet.code).toBe(2);
  }, 60_000);
});
