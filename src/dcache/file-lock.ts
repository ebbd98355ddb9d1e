import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';

/** Another live sift server holds the file; the message names the file and the holder. */
export class FileLockBusy extends Error {}

/**
 * One sift server per SQLite file: `serve` takes this before it opens the database, so a second
 * server on a live one's file stops before it migrates or moves the first one's jobs by their
 * restart policy.
 *
 * The lock is SQLite's own, on a side file `<db>.lock`: a transaction begun with BEGIN EXCLUSIVE
 * and never ended. SQLite holds it as POSIX (fcntl) locks, which the kernel drops when the process
 * ends however it ends, so a killed sift never blocks the next start; a pid file would need
 * guessing whether its process still lives. Nothing is written to the lock file (the journal is in
 * memory), and nothing else in the process opens it (closing any descriptor of a file drops the
 * process's fcntl locks on it). `<db>.holder` names the pid and port of the server that took it.
 */
export class FileLock {
  private constructor(private readonly sqlite: Database.Database) {}

  /** Takes the lock for dbFile and records the holder, or throws FileLockBusy at once. */
  static take(dbFile: string, port: number): FileLock {
    const lockFile = `${dbFile}.lock`;
    const holderFile = `${dbFile}.holder`;
    fs.mkdirSync(path.dirname(path.resolve(dbFile)), { recursive: true, mode: 0o700 });
    fs.closeSync(fs.openSync(lockFile, 'a', 0o600));
    const sqlite = new Database(lockFile);
    try {
      sqlite.pragma('busy_timeout = 0');
      sqlite.pragma('journal_mode = MEMORY');
      sqlite.exec('BEGIN EXCLUSIVE');
    } catch (err) {
      sqlite.close();
      if ((err as { code?: string }).code !== 'SQLITE_BUSY')
        throw new Error(`cannot lock ${lockFile}: ${(err as Error).message}`);
      throw new FileLockBusy(
        `${dbFile} is in use by another sift (${holderOf(holderFile)}); stop it first or set SIFT_DB to another file`,
      );
    }
    // Written whole under a temporary name and renamed, so a refused start never reads half of it.
    const tmp = `${holderFile}.${process.pid}`;
    fs.writeFileSync(tmp, `${JSON.stringify({ pid: process.pid, port })}\n`, { mode: 0o600 });
    fs.renameSync(tmp, holderFile);
    return new FileLock(sqlite);
  }

  /** Lets the lock go (the kernel does so anyway when the process ends). */
  release(): void {
    if (this.sqlite.open) this.sqlite.close();
  }
}

/** How long a refused start waits for the holder's record: it is written just after the lock. */
const HOLDER_WAIT_MS = 2000;

/**
 * The holder's pid and port. The record is written right after the lock is taken, so a start
 * refused in between finds none, or an earlier server's: it waits for the record of a live process.
 */
function holderOf(holderFile: string): string {
  const until = Date.now() + HOLDER_WAIT_MS;
  for (;;) {
    const h = readHolder(holderFile);
    if (h && alive(h.pid)) return `pid ${h.pid}, port ${h.port}`;
    if (Date.now() >= until) return 'holder unknown';
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // start-up: nothing else to run
  }
}

function readHolder(holderFile: string): { pid: number; port: number } | undefined {
  try {
    const h = JSON.parse(fs.readFileSync(holderFile, 'utf8')) as { pid?: unknown; port?: unknown };
    if (Number.isInteger(h.pid) && Number.isInteger(h.port)) return h as { pid: number; port: number };
  } catch {
    // not written yet, or unreadable: the caller waits, then says so
  }
  return undefined;
}

function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'; // another user's process is alive too
  }
}
