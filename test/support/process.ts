import { execFile, execSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { TERMINAL_JOB_STATUSES } from '../../src/common/job-status';
import { freePort } from './pg-cluster';
import { waitUntil } from './wait';

/** The project root: the nearest folder above with a package.json (from sources or compiled benches). */
export const ROOT = (() => {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
})();
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');

function newestMtime(dir: string): number {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return t;
}

/** The built server, rebuilt when the sources are newer: these tests run sift as users do. */
export function ensureBuilt(): string {
  const src = Math.max(newestMtime(path.join(ROOT, 'src')), newestMtime(path.join(ROOT, 'migrations')));
  if (!fs.existsSync(MAIN) || fs.statSync(MAIN).mtimeMs < src) {
    execSync('npm run build', { cwd: ROOT, stdio: 'ignore' });
  }
  return MAIN;
}

export { freePort };

export interface SiftProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** The flags `make run` starts sift with (the Makefile's NODE_FLAGS). */
export const NODE_FLAGS = ['--max-semi-space-size=8', '--v8-pool-size=2'];

/** Starts `node dist/src/main.js` with env and waits until /healthz answers. */
export async function startSiftProcess(
  env: Record<string, string>,
  nodeArgs: string[] = NODE_FLAGS,
  /** Another build's main.js (a benchmark's baseline); this tree's by default. */
  main: string = ensureBuilt(),
): Promise<SiftProcess> {
  const p = await spawnSiftProcess(env, nodeArgs, main);
  await waitForHealthz(p);
  return p;
}

/** Starts `node dist/src/main.js` with env on a port of its own, its output kept; does not wait. */
export async function spawnSiftProcess(
  env: Record<string, string>,
  nodeArgs: string[] = NODE_FLAGS,
  main: string = ensureBuilt(),
): Promise<SiftProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, main], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, url: `http://127.0.0.1:${port}`, output: () => out };
}

/** Waits until a started process answers /healthz; kills it if it exits or does not in time. */
/** Whether the process itself listens on the port: a LISTEN socket of that port among its descriptors. */
function listensOn(pid: number, port: number): boolean {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length > 9 && c[1].endsWith(hex) && c[3] === '0A') inodes.add(c[9]);
    }
  }
  const link = (fd: string) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return ''; // closed meanwhile
    }
  };
  let fds: string[] = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // it has ended: the next look says how
  }
  return fds.some((fd) => inodes.has(/^socket:\[(\d+)\]$/.exec(link(fd))?.[1] ?? ''));
}

export async function waitForHealthz(p: SiftProcess, timeoutMs = 15_000): Promise<void> {
  try {
    await waitUntil(
      async () => {
        if (p.child.exitCode !== null) throw new Error(`sift exited with ${p.child.exitCode}: ${p.output()}`);
        const ok = (await fetch(`${p.url}/healthz`).catch(() => undefined))?.ok;
        // Its own answer: under load a port freed for it may be taken by another test's sift first.
        return (ok && listensOn(p.child.pid!, Number(new URL(p.url).port))) || undefined;
      },
      'sift to answer /healthz',
      timeoutMs,
      50,
    );
  } catch (err) {
    p.child.kill('SIGKILL');
    throw new Error(`sift did not start: ${(err as Error).message}\n${p.output()}`);
  }
}

/** Polls a sift process's view of a job until `done` holds for it (by default: the job has ended). */
export async function waitForJobIn<V extends { status: string }>(
  p: SiftProcess,
  id: string,
  headers: Record<string, string>,
  done: (view: V) => boolean = (v) => (TERMINAL_JOB_STATUSES as readonly string[]).includes(v.status),
  timeoutMs = 60_000,
): Promise<V> {
  return waitUntil(
    async () => {
      const view = (await (await fetch(`${p.url}/v1/batch/${id}`, { headers })).json()) as V;
      return done(view) ? view : undefined;
    },
    `job ${id} on ${p.url}`,
    timeoutMs,
  );
}

export async function kill(p: SiftProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
  // Ended already (by a code, or by a signal: exitCode stays null then).
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode;
  const done = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
  p.child.kill(signal);
  return done;
}

/** The CLI as a user runs it: `node dist/src/cli.js ARGS` with env (and stdin when given). */
export function sift(
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [path.join(ROOT, 'dist', 'src', 'cli.js'), ...args],
      { env: { PATH: process.env.PATH ?? '', ...env } },
      (error, out, err) =>
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          out: String(out),
          err: String(err),
        }),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** The resident set of a process, in bytes, from /proc. */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) * 1024;
}

/**
 * Whether a process runs. A zombie does not: it has ended, holds no memory and runs nothing, and
 * only waits for whichever process adopted it to read its status (this machine's first process
 * does so every few seconds).
 */
export function processRuns(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Whether a TCP connection to host:port is accepted. */
export function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, host);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Node flags that make a sift process write, when told SIGUSR2, the packages it has loaded (its
 * files under node_modules); read them with loadedPackages. The probe is written into dir.
 */
export function packagesProbe(dir: string): string[] {
  const probe = path.join(dir, 'packages-probe.js');
  fs.writeFileSync(
    probe,
    `process.on('SIGUSR2', () => {
      const names = new Set();
      for (const k of Object.keys(require.cache)) {
        const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(k);
        if (m) names.add(m[1]);
      }
      require('node:fs').writeSync(2, 'LOADED PACKAGES ' + JSON.stringify([...names].sort()) + '\\n');
    });`,
  );
  return ['--require', probe];
}

/** The packages a sift process started with packagesProbe's flags has loaded now. */
export async function loadedPackages(p: SiftProcess): Promise<string[]> {
  const from = p.output().length;
  p.child.kill('SIGUSR2');
  const list = await waitUntil(
    () => /LOADED PACKAGES (\[.*\])\n/.exec(p.output().slice(from))?.[1],
    'the packages probe',
  );
  return JSON.parse(list) as string[];
}
