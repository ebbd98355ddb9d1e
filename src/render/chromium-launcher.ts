import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { launcherPid } from './chromium-process';

/** The unprivileged user Chromium runs as when sift runs as root. */
export interface BrowserUser {
  uid: number;
  gid: number;
}

/** A launch folder: the script Chromium is started through, its pid file and Chromium's own folder. */
export interface Launcher {
  dir: string;
  executable: string;
  pidFile: string;
  /** Chromium's profile and home, owned by the user it runs as. */
  data: string;
  user?: BrowserUser;
}

const LAUNCHER_PREFIX = 'sift-chromium-';
/** A launch folder younger than this may be one another process is launching from right now. */
const LAUNCHING_MS = 120_000;
/** The kernel's overflow ids: `nobody` where /etc/passwd does not list it. */
const NOBODY = 65_534;

let user: BrowserUser | undefined | null = null;
/**
 * Who Chromium runs as: sift's own user, or when sift runs as root `nobody` (its ids from
 * /etc/passwd). As root Chromium's sandbox will not start; as a user that owns nothing it does,
 * and a browser process a page broke into can reach nothing of sift's.
 */
export function browserUser(): BrowserUser | undefined {
  if (user !== null) return user;
  user = undefined;
  if (process.getuid?.() !== 0) return user;
  let passwd = '';
  try {
    passwd = fs.readFileSync('/etc/passwd', 'utf8');
  } catch {
    // no passwd: the overflow ids
  }
  const f = passwd
    .split('\n')
    .find((l) => l.startsWith('nobody:'))
    ?.split(':');
  const id = (s?: string) => (s && /^\d+$/.test(s) && s !== '0' ? Number(s) : NOBODY);
  user = { uid: id(f?.[2]), gid: id(f?.[3]) };
  return user;
}

const asUser = (u: BrowserUser) => [
  'setpriv',
  `--reuid=${u.uid}`,
  `--regid=${u.gid}`,
  '--clear-groups',
  // A change of user clears the parent-death signal: set again.
  '--pdeathsig',
  'KILL',
];
const runs = (cmd: string[]) =>
  spawnSync(cmd[0], [...cmd.slice(1), 'true'], { stdio: 'ignore', timeout: 5000 }).status === 0;

let confined: string[] | undefined;
/**
 * What Chromium is started under, tried once: a PID namespace of its own (see chromiumLauncher)
 * and the drop to its user. Root makes the namespace and drops to the user inside it; a user
 * makes it in a user namespace mapping it to itself (mapped to root, Chromium refuses its sandbox).
 */
function confinement(u: BrowserUser | undefined): string[] {
  if (confined) return confined;
  const drop = u ? asUser(u) : [];
  const keep = ['--pid', '--fork', '--kill-child'];
  const pidNs = ['unshare', ...keep];
  // --map-current-user came with util-linux 2.38; --map-user and --map-group before it.
  const [uid, gid] = u ? [u.uid, u.gid] : [process.getuid?.(), process.getgid?.()];
  const userNs = [
    ['unshare', '--user', '--map-current-user', ...keep],
    ['unshare', `--map-user=${uid}`, `--map-group=${gid}`, ...keep],
  ];
  if (process.getuid?.() === 0 && runs([...pidNs, ...drop])) return (confined = [...pidNs, ...drop]);
  const ns = userNs.find((n) => runs([...drop, ...n]));
  confined = ns ? [...drop, ...ns] : drop;
  return confined;
}

/**
 * A launch folder: an executable that starts Chromium so that no process of it outlives sift, and
 * the file it writes its pid to. `setpriv --pdeathsig KILL` kills the first process when sift dies
 * (even by SIGKILL); where a PID namespace can be had, `unshare --pid --kill-child` makes Chromium
 * that namespace's first process, and the kernel kills every process in a namespace whose first
 * process died: the zygote, renderers, crashpad's handlers, all of them. Without one, Chromium's
 * children end when they lose the browser (their IPC channel closes), and killTree ends them.
 * Every process of it has oom_score_adj 1000, so the kernel's OOM killer takes a renderer before
 * sift; as root it is set before the drop, and the user cannot lower it again.
 */
export function chromiumLauncher(chromiumPath: string): Launcher {
  const u = browserUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), LAUNCHER_PREFIX));
  const executable = path.join(dir, 'chromium');
  const pidFile = path.join(dir, 'pid');
  const data = path.join(dir, 'data');
  fs.mkdirSync(data, { mode: 0o700 });
  if (u) {
    fs.chownSync(data, u.uid, u.gid);
    // The user may pass through to its folder; the script and the pid file stay root's.
    fs.chmodSync(dir, 0o711);
  }
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const chain = ['setpriv', '--pdeathsig', 'KILL', ...confinement(u)].join(' ');
  // The driver's profile folder is noted (for sweepLeftovers, after a SIGKILL) and not used:
  // Chromium writes in its own, so the driver's cleanup, a recursive removal as sift's user, never
  // walks a folder the browser's user can change. Its working folder is its own too (sift's may be
  // one it cannot enter).
  const script = [
    '#!/bin/sh',
    `echo $$ > ${q(pidFile)}`,
    'for a do',
    '  shift',
    `  case "$a" in --user-data-dir=*) printf '%s' "\${a#--user-data-dir=}" > ${q(path.join(dir, 'profile'))}; a=${q(`--user-data-dir=${data}`)};; esac`,
    '  set -- "$@" "$a"',
    'done',
    'echo 1000 > /proc/self/oom_score_adj',
    `cd ${q(data)} || exit 1`,
    `export HOME=${q(data)}`,
    'unset XDG_CONFIG_HOME XDG_CACHE_HOME',
    `exec ${chain} ${q(chromiumPath)} "$@"`,
  ];
  fs.writeFileSync(executable, `${script.join('\n')}\n`, { mode: 0o700 });
  return { dir, executable, pidFile, data, user: u };
}

const run = (argv: string[]) =>
  new Promise<void>((resolve) => execFile(argv[0], argv.slice(1), { timeout: 60_000 }, () => resolve()));

/**
 * Removes a launch folder with Chromium's folder in it. What Chromium's user could write is
 * removed as that user: a recursive removal by root could be led out of the folder by a link
 * swapped in mid-walk. Returns whether it all went; a folder not of sift or of the browser's user
 * is left alone.
 */
export async function removeLaunchFolder(dir: string, u = browserUser()): Promise<boolean> {
  const data = path.join(dir, 'data');
  const st = lstatOr(data);
  if (st) {
    if (!st.isDirectory()) return false;
    if (st.uid === process.getuid?.()) fs.rmSync(data, { recursive: true, force: true });
    else if (u && st.uid === u.uid) {
      // The user empties it; the folder itself is in one of root's, where the user cannot remove it.
      await run([
        'setpriv',
        `--reuid=${u.uid}`,
        `--regid=${u.gid}`,
        '--clear-groups',
        'rm',
        '-rf',
        '--',
        data,
      ]);
      try {
        fs.rmdirSync(data);
      } catch {
        return false; // something is left in it: not walked
      }
    } else return false;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return true;
}

/**
 * Removes what browsers of ended processes left in the temporary folder: a process killed with
 * SIGKILL leaves its launch folder (with Chromium's folder in it) and the driver's profile folder
 * behind. A folder is left alone while its browser runs (its launcher's process is there, with the
 * folder in its command line), and while it is young enough to be launching. Returns how many
 * were removed.
 */
export async function sweepLeftovers(tmp = os.tmpdir(), now = Date.now()): Promise<number> {
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
      // (A launcher of an earlier version named only the driver's profile folder.)
      if (cmdline.includes(`${dir}/`) || (profile && cmdline.includes(profile))) continue;
      if (!profile && now - st.mtimeMs < LAUNCHING_MS) continue;
      if (!(await removeLaunchFolder(dir))) continue;
      // Only the driver's profile folders of the temporary folder, never a path a file could
      // name; ours, and nothing in it Chromium wrote.
      const p = profile ? lstatOr(profile) : undefined;
      if (
        p?.isDirectory() &&
        p.uid === process.getuid?.() &&
        path.dirname(profile) === tmp &&
        path.basename(profile).startsWith('playwright_chromiumdev_profile-')
      )
        fs.rmSync(profile, { recursive: true, force: true });
      removed++;
    } catch {
      // another process swept it first, or it cannot be read: left
    }
  }
  return removed;
}

function lstatOr(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
