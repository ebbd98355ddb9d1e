import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Chromium's switches. The page's own traffic goes through the context's proxy; these keep the
 * rest from going around it: every name resolves to nothing but the proxy's address (so nothing
 * is looked up or connected to directly), QUIC is off (it would not use an HTTP proxy), WebRTC
 * sends UDP only through the proxy (there is none: none at all), and the browser's own background
 * traffic (updates, sync, safe browsing) is off.
 */
export const CHROMIUM_ARGS = [
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  '--disable-quic',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-domain-reliability',
  '--disable-breakpad',
  '--no-pings',
  '--disable-gpu',
  '--disable-dev-shm-usage',
];

/** Whether a new PID namespace can be had here (root, or unprivileged user namespaces allowed). */
let pidNamespace: string[] | undefined;
function namespaceArgs(): string[] {
  if (pidNamespace) return pidNamespace;
  const tries = [['--pid'], ['--user', '--map-root-user', '--pid']];
  pidNamespace = [];
  for (const t of tries) {
    const r = spawnSync('unshare', [...t, '--fork', '--kill-child', 'true'], {
      stdio: 'ignore',
      timeout: 5000,
    });
    if (r.status === 0) {
      pidNamespace = [...t, '--fork', '--kill-child'];
      break;
    }
  }
  return pidNamespace;
}

/**
 * A launch folder: an executable that starts Chromium so that no process of it outlives sift, and
 * the file it writes its pid to. `setpriv --pdeathsig KILL` kills the first process when sift dies
 * (even by SIGKILL); where a PID namespace can be had, `unshare --pid --kill-child` makes Chromium
 * that namespace's first process, and the kernel kills every process in a namespace whose first
 * process died: the zygote, renderers, crashpad's handlers, all of them. Without one, Chromium's
 * children end when they lose the browser (their IPC channel closes), and killTree ends them.
 */
export function chromiumLauncher(chromiumPath: string): { dir: string; executable: string; pidFile: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), LAUNCHER_PREFIX));
  const executable = path.join(dir, 'chromium');
  const pidFile = path.join(dir, 'pid');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const ns = namespaceArgs();
  const unshare = ns.length ? `unshare ${ns.join(' ')} ` : '';
  // The profile folder the driver made is noted, for sweepLeftovers to find after a SIGKILL.
  fs.writeFileSync(
    executable,
    `#!/bin/sh\necho $$ > ${q(pidFile)}\n` +
      `for a in "$@"; do case "$a" in --user-data-dir=*) printf '%s' "\${a#--user-data-dir=}" > ${q(path.join(dir, 'profile'))};; esac; done\n` +
      `exec setpriv --pdeathsig KILL ${unshare}${q(chromiumPath)} "$@"\n`,
    { mode: 0o700 },
  );
  return { dir, executable, pidFile };
}

const LAUNCHER_PREFIX = 'sift-chromium-';
/** A launch folder younger than this may be one another process is launching from right now. */
const LAUNCHING_MS = 120_000;

/**
 * Removes what browsers of ended processes left in the temporary folder: a process killed with
 * SIGKILL leaves its launch folder and Chromium's profile folder behind. A folder is left alone
 * while its browser runs (its launcher's process is there, with the profile in its command line),
 * and while it is young enough to be launching. Returns how many were removed.
 */
export function sweepLeftovers(tmp = os.tmpdir(), now = Date.now()): number {
  let removed = 0;
  let names: string[];
  try {
    names = fs.readdirSync(tmp).filter((n) => n.startsWith(LAUNCHER_PREFIX));
  } catch {
    return 0;
  }
  for (const name of names) {
    const dir = path.join(tmp, name);
    try {
      // Only real folders of this user: never one another user planted (a link, or not ours).
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
      const profile = readOr(path.join(dir, 'profile'));
      const pid = launcherPid(path.join(dir, 'pid'));
      const cmdline = pid ? readOr(`/proc/${pid}/cmdline`) : '';
      if (profile && cmdline.includes(profile)) continue;
      if (!profile && now - fs.statSync(dir).mtimeMs < LAUNCHING_MS) continue;
      // Only Chromium's profile folders of the temporary folder, never a path a file could name.
      if (
        profile &&
        path.dirname(profile) === tmp &&
        path.basename(profile).startsWith('playwright_chromiumdev_profile-')
      )
        fs.rmSync(profile, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
      removed++;
    } catch {
      // another process swept it first, or it cannot be read: left
    }
  }
  return removed;
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Whether the launcher puts Chromium in a PID namespace of its own. */
export const ownNamespace = (): boolean => namespaceArgs().length > 0;

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid …: comm may hold spaces and parentheses; the last ')' ends it.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** `root` and every process below it, read from /proc. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const ppid = parentOf(pid);
    if (ppid === undefined) continue;
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  if (!fs.existsSync(`/proc/${root}`)) return [];
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]) ?? []));
  return out;
}

/**
 * The memory of these processes together, in bytes: their proportional set sizes (shared pages
 * split between the processes that share them; Chromium's processes share most of their code),
 * or their resident sizes where smaps_rollup cannot be read.
 */
export function treeMemory(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const pss = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      if (pss) {
        total += Number(pss[1]) * 1024;
        continue;
      }
    } catch {
      // gone, or no smaps_rollup: statm below
    }
    try {
      const resident = Number(fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
      total += resident * 4096;
    } catch {
      // the process has gone
    }
  }
  return total;
}

/** SIGKILL to the process and everything below it (read first, so none is missed as it dies). */
export function killTree(root: number): void {
  for (const pid of processTree(root).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** The launcher's pid as it wrote it, or undefined before it has. */
export function launcherPid(pidFile: string): number | undefined {
  try {
    const n = Number(fs.readFileSync(pidFile, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}
