import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

/**
 * Jest's global setup: the PostgreSQL suites need a server. SIFT_TEST_PG_URL (default the local
 * one) is used when it answers; otherwise a throwaway server is started from the system's
 * initdb/pg_ctl for this run and stopped after it. No server and no way to start one is an error:
 * the PostgreSQL suites are never skipped.
 */
const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

async function answers(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

function pgBin(): string | undefined {
  const dirs = (process.env.PATH ?? '').split(':');
  const versions = fs.existsSync('/usr/lib/postgresql')
    ? fs.readdirSync('/usr/lib/postgresql').sort().reverse()
    : [];
  for (const v of versions) dirs.push(path.join('/usr/lib/postgresql', v, 'bin'));
  return dirs.find((d) => fs.existsSync(path.join(d, 'initdb')) && fs.existsSync(path.join(d, 'pg_ctl')));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface ThrowawayServer {
  run: (args: string[]) => void;
  data: string;
}

export default async function setup(): Promise<void> {
  const url = process.env.SIFT_TEST_PG_URL ?? DEFAULT_URL;
  if (await answers(url)) {
    process.env.SIFT_TEST_PG_URL = url;
    return;
  }
  const bin = pgBin();
  if (!bin) {
    throw new Error(
      `no PostgreSQL server answers at ${url}, and no initdb/pg_ctl to start one: ` +
        'install PostgreSQL (Debian: postgresql) or set SIFT_TEST_PG_URL',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-pg-'));
  const data = path.join(dir, 'data');
  // initdb refuses to run as root: as root, the server runs as the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['-R', 'postgres', dir]);
  const run = (args: string[]) => {
    const [cmd, ...rest] = args;
    const full = path.join(bin, cmd);
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', full, ...rest], { stdio: 'ignore' });
    else execFileSync(full, rest, { stdio: 'ignore' });
  };
  const port = await freePort();
  run(['initdb', '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  run([
    'pg_ctl',
    '-D',
    data,
    '-l',
    path.join(dir, 'log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
    'start',
  ]);
  process.env.SIFT_TEST_PG_URL = `postgres://postgres@127.0.0.1:${port}/postgres`;
  (globalThis as { siftPgServer?: ThrowawayServer }).siftPgServer = { run, data };
}
