import type { ReadFailure } from './read-failure';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import type { ChildReply } from './document-child';
import type { ParsedDocument, ReadJob } from './pdf-reader';
import { openSharedFile, readFormats, writeJob } from './shared-file';

// Started with `node -e`: loads the child's module, keeps the optional canvas package out, then
// pdf.js and its worker (ES modules, imported here because the module itself is CommonJS).
const BOOT = `
const [file, root] = process.argv.slice(1);
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const child = require(file);
child.prepare(root);
const at = (f) => import(pathToFileURL(path.join(root, 'legacy', 'build', f)).href);
Promise.all([at('pdf.mjs'), at('pdf.worker.mjs')]).then(
  ([pdfjs, worker]) => child.serve(pdfjs, worker, root),
  (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(3); },
);
`;

export interface ProcessLimits {
  /** The data-segment limit (RLIMIT_DATA), MB: the memory a document may have. */
  maxMb: number;
  /** Bytes added to that limit for the executable memory node reserves as it starts. */
  codeBytes: number;
}

/** Why the parent ended a process, when it did. */
export type KillReason =
  | 'deadline'
  | 'page_deadline'
  | 'cpu'
  | 'preempted'
  | 'aborted'
  | 'retired'
  | 'closed'
  | 'start'
  | 'malformed';

/** How a run ended other than with a document: a failure the document caused, or the process's end. */
export type RunEnd =
  | { fail: ReadFailure['kind']; message: string }
  | { died: true; killed?: KillReason; signal: NodeJS.Signals | null; code: number | null; stderr: string };

/**
 * One parser process: `node` under `setpriv --pdeathsig KILL` (it is killed when sift dies, even
 * by SIGKILL) and `prlimit --data` (its data segment, where every heap and buffer lives, is capped:
 * past it allocations fail and the process dies or says so). Its environment is only PATH: a
 * hostile document never runs next to sift's secrets. One document at a time.
 */
export class ParserProcess {
  readonly proc: ChildProcess;
  readonly ready: Promise<void>;
  /** Set once it has exited. */
  exited = false;
  readonly exit: Promise<void>;
  documents = 0;
  private killed?: KillReason;
  private stderr = '';
  private current?: {
    id: number;
    progress: (page: number) => void;
    done: (r: ParsedDocument | RunEnd) => void;
  };
  private nextId = 0;
  /** /proc/<pid>/stat, held open and read again from its start for each CPU reading. */
  private statFd?: number;
  private readonly stat = Buffer.alloc(1024);
  /** The file large documents go and formats come back by (shared-file.ts): the child's descriptor 4. */
  private readonly sharedFd = openSharedFile();

  constructor(
    childFile: string,
    pdfjsRoot: string,
    readonly limits: ProcessLimits,
  ) {
    const bytes = Math.floor(limits.maxMb * 1024 * 1024) + limits.codeBytes;
    // V8 is told a heap limit below the data limit, so that it collects garbage hard before the
    // kernel refuses it memory; decoded streams live outside the heap, in the rest.
    const heapMb = Math.max(32, Math.floor(limits.maxMb * 0.6));
    // The young generation: its three semi-spaces take at most a fifth of the limit, 16 MB each
    // at most (at the default 256 MB: a document is read ~25 % faster than with 8; bench/office).
    const semiMb = Math.max(1, Math.min(16, Math.floor(limits.maxMb / 16)));
    // Under a heap limit this small V8 grows the heap ~1.7 times before marking it all again (up to
    // 4 under the usual limit): pdf.js's 19 MB were marked every five Office documents or so, 2–3
    // ms of each. Twice: 10–30 MB more at its peak, 7–19 % less CPU a document (bench/office).
    try {
      this.proc = spawn(
        'setpriv',
        [
          '--pdeathsig',
          'KILL',
          '--',
          'prlimit',
          `--data=${bytes}`,
          // A parser that aborts (V8 out of memory) leaves no core file behind.
          '--core=0',
          '--',
          process.execPath,
          '--v8-pool-size=1',
          `--max-old-space-size=${heapMb}`,
          `--max-semi-space-size=${semiMb}`,
          '--heap-growing-percent=100',
          '-e',
          BOOT,
          '--',
          childFile,
          pdfjsRoot,
        ],
        {
          stdio: ['ignore', 'ignore', 'pipe', 'ipc', ...(this.sharedFd === undefined ? [] : [this.sharedFd])],
          serialization: 'advanced',
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            UV_THREADPOOL_SIZE: '1',
            ...(this.sharedFd === undefined ? {} : { SIFT_SHARED_FD: '4' }),
          },
        },
      );
    } catch (err) {
      if (this.sharedFd !== undefined) fs.closeSync(this.sharedFd);
      throw err;
    }
    this.proc.stderr?.setEncoding('utf8');
    this.proc.stderr?.on('data', (s: string) => {
      this.stderr = (this.stderr + s).slice(-2000);
    });
    this.exit = new Promise((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.exited) return;
        this.exited = true;
        if (this.statFd !== undefined) fs.close(this.statFd, () => undefined);
        if (this.sharedFd !== undefined) fs.close(this.sharedFd, () => undefined);
        const run = this.current;
        this.current = undefined;
        run?.done({ died: true, killed: this.killed, signal, code, stderr: this.stderr });
        resolve();
      };
      this.proc.once('exit', ended);
      // Not started at all (no setpriv, say), or the channel failed: ended, the error said why.
      this.proc.on('error', (err) => {
        this.stderr = (this.stderr + String(err)).slice(-2000);
        if (this.proc.pid === undefined) ended(null, null);
        else this.kill('start');
      });
    });
    this.ready = new Promise((resolve, reject) => {
      this.proc.once('error', (err) => reject(err));
      this.proc.once('exit', (code, signal) =>
        reject(
          new Error(`the document parser exited as it started (${signal ?? code}): ${this.stderr.trim()}`),
        ),
      );
      this.proc.on('message', (m: ChildReply) => {
        // The child reads hostile documents: what it says is checked before it is believed.
        if (typeof m !== 'object' || m === null) return this.kill('malformed');
        if ('ready' in m) resolve();
        else this.reply(m);
      });
    });
    this.ready.catch(() => undefined);
    // A child that never says it is ready would hold its slot for good.
    const startTimer = setTimeout(() => this.kill('start'), START_TIMEOUT_MS);
    startTimer.unref();
    this.ready.then(
      () => clearTimeout(startTimer),
      () => clearTimeout(startTimer),
    );
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  private reply(m: Exclude<ChildReply, { ready: true }>): void {
    const run = this.current;
    if (!run || run.id !== m.id) return;
    if ('progress' in m) return run.progress(Number(m.progress));
    if ('ok' in m && 'parts' in m) {
      const formats =
        this.sharedFd === undefined
          ? undefined
          : readFormats(this.sharedFd, m.parts, this.limits.maxMb * 1024 * 1024);
      if (!formats) return this.kill('malformed');
      m = { id: m.id, ok: { ...m.ok, ...formats } };
    }
    if ('ok' in m && !wellFormed(m.ok)) {
      this.kill('malformed');
      return;
    }
    this.current = undefined;
    this.documents++;
    run.done('ok' in m ? m.ok : { fail: m.fail, message: m.message });
  }

  /** Reads a document; `progress(n)` as page n starts. Never rejects: the end says how it went. */
  run(job: ReadJob, progress: (page: number) => void): Promise<ParsedDocument | RunEnd> {
    return new Promise((done) => {
      const id = this.nextId++;
      if (this.exited)
        return done({ died: true, killed: this.killed, signal: null, code: null, stderr: this.stderr });
      this.current = { id, progress, done };
      // A large document by the shared file, the rest of the job by the channel.
      const size = job.bytes.byteLength;
      const message = writeJob(this.sharedFd, job.bytes)
        ? { id, job: { ...job, bytes: new Uint8Array(0) }, size }
        : { id, job };
      this.proc.send(message, (err) => {
        if (err) this.kill('start');
      });
    });
  }

  /**
   * The CPU time the process has used, in ms (user and system, every thread: pdf.js's worker runs
   * in its main one), read from /proc; undefined once it has gone. Read at once: /proc is the
   * kernel's memory, never a disk, and one descriptor read again from its start costs a few
   * microseconds where opening, reading and closing the file through the thread pool cost about
   * 0.2 ms of this thread for each document.
   */
  cpuMs(): number | undefined {
    if (this.exited || this.pid === undefined) return undefined;
    try {
      this.statFd ??= fs.openSync(`/proc/${this.pid}/stat`, 'r');
      const stat = this.stat.toString(
        'latin1',
        0,
        fs.readSync(this.statFd, this.stat, 0, this.stat.length, 0),
      );
      // pid (comm) state …: fields 14 and 15, utime and stime, in clock ticks (USER_HZ, 100).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
    } catch {
      return undefined;
    }
  }

  /** SIGKILL, saying why: a run in flight ends with `{died, killed: reason}`. */
  kill(reason: KillReason): void {
    if (this.exited) return;
    this.killed ??= reason;
    this.proc.kill('SIGKILL');
  }

  /** Whether it keeps sift's event loop alive: only while it has work. */
  hold(busy: boolean): void {
    const channel = this.proc.channel as { ref?: () => void; unref?: () => void } | undefined;
    if (busy) {
      this.proc.ref();
      channel?.ref?.();
    } else {
      this.proc.unref();
      channel?.unref?.();
    }
  }
}

/** Linux counts a process's CPU time in ticks of 1/100 s (USER_HZ) on every architecture sift runs on. */
const CLOCK_TICKS = 100;

/** A parser that has not started in this long is killed (node and pdf.js load in about 0.5 s). */
const START_TIMEOUT_MS = 20_000;

/** Whether a child's answer has a parsed document's shape (a child gone wrong says anything). */
function wellFormed(d: unknown): d is ParsedDocument {
  const x = d as Partial<ParsedDocument> | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.markdown === 'string' &&
    typeof x.text === 'string' &&
    typeof x.html === 'string' &&
    typeof x.truncated === 'boolean' &&
    typeof x.hasText === 'boolean' &&
    typeof x.metadata === 'object' &&
    x.metadata !== null &&
    Number.isInteger(x.metadata.pages)
  );
}
