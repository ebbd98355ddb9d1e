import * as fs from 'node:fs';

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

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid …: comm may hold spaces and parentheses; the last ')' ends it.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * A process's children, from each of its threads' `children` file: the tree is read from its own
 * few processes, not from every process of the machine (a sample during renders reads it five
 * times a second).
 */
function childrenOf(pid: number): number[] {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // the process has gone
  }
  const out: number[] = [];
  for (const tid of tids) {
    try {
      const list = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
      for (const c of list.split(' ')) if (c.trim()) out.push(Number(c));
    } catch {
      // the thread ended
    }
  }
  return out;
}

let childrenFiles: boolean | undefined;
/** Whether the kernel lists a thread's children (CONFIG_PROC_CHILDREN); else every stat is read. */
const hasChildrenFiles = () =>
  (childrenFiles ??= fs.existsSync(`/proc/${process.pid}/task/${process.pid}/children`));

/** Every process's children, read from the parent named in each one's stat. */
function childrenOfAll(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return children;
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
  return children;
}

/** `root` and every process below it, read from /proc. */
export function processTree(root: number): number[] {
  if (!fs.existsSync(`/proc/${root}`)) return [];
  const all = hasChildrenFiles() ? undefined : childrenOfAll();
  const seen = new Set([root]);
  const out = [root];
  for (let i = 0; i < out.length; i++) {
    // A process that moved to another parent while the tree was read may be listed twice.
    for (const c of all ? (all.get(out[i]) ?? []) : childrenOf(out[i])) {
      if (seen.has(c)) continue;
      seen.add(c);
      out.push(c);
    }
  }
  return out;
}

/** Proportional set size from a smaps_rollup file's text, in bytes. */
const pssOf = (rollup: string): number | undefined => {
  const m = /^Pss:\s+(\d+) kB/m.exec(rollup);
  return m ? Number(m[1]) * 1024 : undefined;
};

/**
 * The memory of these processes together, in bytes: their proportional set sizes (shared pages
 * split between the processes that share them; Chromium's processes share most of their code),
 * or their resident sizes where smaps_rollup cannot be read.
 */
export function treeMemory(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    let pss: number | undefined;
    try {
      pss = pssOf(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    } catch {
      // gone, or no smaps_rollup: statm below
    }
    total += pss ?? residentOf(pid);
  }
  return total;
}

/**
 * treeMemory, read off the main thread: the kernel walks every page table of a process to sum its
 * smaps_rollup, tens of milliseconds for a renderer of a few GB.
 */
export async function treeMemoryAsync(pids: number[]): Promise<number> {
  const each = await Promise.all(
    pids.map((pid) =>
      fs.promises.readFile(`/proc/${pid}/smaps_rollup`, 'utf8').then(
        (text) => pssOf(text) ?? residentOf(pid),
        () => residentOf(pid),
      ),
    ),
  );
  return each.reduce((a, b) => a + b, 0);
}

const PAGE = 4096;

function residentOf(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE;
  } catch {
    return 0; // the process has gone
  }
}

/**
 * The resident sizes of these processes together, in bytes: a page shared by several is counted
 * in each, so never less than their proportional set sizes (treeMemory), and cheap to read (the
 * kernel keeps the count; no page table is walked).
 */
export function treeResident(pids: number[]): number {
  return pids.reduce((n, pid) => n + residentOf(pid), 0);
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
