import { execFile } from 'node:child_process';
import * as fs from 'node:fs';

/** Writable executable memory (anonymous `rwxp` mappings, V8's code) in a process's maps, bytes. */
export function codeIn(maps: string): number {
  let n = 0;
  for (const line of maps.split('\n')) {
    const [range, perms, , , inode] = line.split(/\s+/);
    if (perms !== 'rwxp' || inode !== '0') continue;
    const [from, to] = range.split('-').map((h) => parseInt(h, 16));
    n += to - from;
  }
  return n;
}

/** This process's own: never less than a fresh node's. 0 without /proc. */
function ownCode(): number {
  try {
    return codeIn(fs.readFileSync('/proc/self/maps', 'utf8'));
  } catch {
    return 0;
  }
}

// Prints a fresh node's, read as above.
const COUNT_CODE = `process.stdout.write(String((${codeIn.toString()})(require('node:fs').readFileSync('/proc/self/maps', 'utf8'))))`;

let reserved: Promise<number> | undefined;
/**
 * Executable memory node reserves as it starts, counted in the data limit though it holds no
 * data: V8's code range, writable on Node 24 (about 512 MB, so node would not start under a limit
 * of 256 MB), a few hundred KB on Node 20. Read once from a node just started, the same binary:
 * this process's own grows with the code it has compiled (5 MB in a test process after a few
 * documents), which would raise every child's limit by as much.
 */
export function codeReservation(): Promise<number> {
  reserved ??= new Promise((resolve) => {
    execFile(process.execPath, ['--v8-pool-size=1', '-e', COUNT_CODE], { timeout: 10_000 }, (err, out) => {
      const n = Number(out);
      // Not read (a machine too busy to start node in time, say): this process's own, which is
      // more than enough, as it was before.
      resolve(err || !Number.isSafeInteger(n) ? ownCode() : n);
    });
  });
  return reserved;
}
