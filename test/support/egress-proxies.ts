import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { waitUntil } from './wait';

/** A real proxy process on a loopback address (Debian's tinyproxy or microsocks), and what it logged. */
export interface ProxyProcess {
  url: string;
  /** Everything it has logged so far. */
  log(): string;
  stop(): Promise<void>;
}

const TINYPROXY = '/usr/bin/tinyproxy';
const MICROSOCKS = '/usr/bin/microsocks';

/** A port free on `host` now. */
async function freePort(host: string): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, host, resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function need(bin: string, pkg: string): void {
  if (!fs.existsSync(bin))
    throw new Error(`${bin} is missing: make test installs Debian's ${pkg} (apt-get install ${pkg})`);
}

async function started(child: ChildProcess, host: string, port: number, log: () => string): Promise<void> {
  let exited = false;
  child.once('exit', () => (exited = true));
  await waitUntil(
    () =>
      exited ||
      new Promise<true | undefined>((resolve) => {
        const c = net.connect({ host, port }, () => {
          c.destroy();
          resolve(true);
        });
        c.on('error', () => resolve(undefined));
      }),
    `the proxy to listen on ${host}:${port}`,
    10_000,
  );
  if (exited) throw new Error(`the proxy exited at start: ${log()}`);
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
  };
}

/** tinyproxy (HTTP CONNECT and plain forwarding) on `host`, logging every connection it makes. */
export async function startTinyproxy(host: string): Promise<ProxyProcess> {
  need(TINYPROXY, 'tinyproxy');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-tinyproxy-'));
  const port = await freePort(host);
  const logFile = path.join(dir, 'tinyproxy.log');
  // No ConnectPort line: CONNECT to any port (a fixture's) is allowed.
  fs.writeFileSync(
    path.join(dir, 'tinyproxy.conf'),
    [
      `Port ${port}`,
      `Listen ${host}`,
      'Timeout 30',
      `LogFile "${logFile}"`,
      'LogLevel Connect',
      'MaxClients 50',
      'Allow 127.0.0.0/8',
    ].join('\n') + '\n',
  );
  const child = spawn(TINYPROXY, ['-d', '-c', path.join(dir, 'tinyproxy.conf')], { stdio: 'ignore' });
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  await started(child, host, port, log);
  return { url: `http://${host}:${port}`, log, stop: stopper(child) };
}

/** microsocks (SOCKS5) on `host`, logging every connection it makes. */
export async function startMicrosocks(host: string): Promise<ProxyProcess> {
  need(MICROSOCKS, 'microsocks');
  const port = await freePort(host);
  const child = spawn(MICROSOCKS, ['-i', host, '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  await started(child, host, port, () => out);
  return { url: `socks5://${host}:${port}`, log: () => out, stop: stopper(child) };
}
