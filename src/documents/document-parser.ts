import * as os from 'node:os';
import { InternalFault } from '../common/errors';
import { childModule, pdfjsRoot } from './child-source';
import { failureOf, parserBusy, parserClosed, queuedTooLong, tooComplex } from './document-errors';
import { parsePageRanges, type PageRange } from './page-ranges';
import { ParserProcess } from './parser-process';
import type { ParsedDocument, ReadJob } from './pdf-reader';

export interface ParseOptions {
  /** Pages to read, as "1-5,9" (see parsePageRanges); all when absent. */
  pages?: string;
  /** At most this many pages are read (SIFT_PDF_MAX_PAGES). */
  maxPages: number;
  /** The parser's data-segment limit, MB (SIFT_PDF_MAX_MB). */
  maxMb: number;
  /** The time the parse may take, from this call, waiting for a parser included. */
  deadlineMs: number;
  /** Aborts the parse (the caller went away): rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface DocumentParserOptions {
  /** Parser processes at most (documents parsed at once); by default one per spare core, 1 to 4. */
  processes?: number;
  /** A process is replaced after this many documents (and after any that ran out of memory). */
  documentsPerProcess?: number;
  /** Opening the document, or one page, may take this long before the parse is too complex. */
  pageTimeoutMs?: number;
  /** An idle process ends after this long. */
  idleMs?: number;
  /** Documents that may wait for a parser; past it, 503 server_busy. */
  maxQueue?: number;
  /** Bytes of documents that may wait for a parser (held in memory meanwhile); past it, 503. */
  maxQueueBytes?: number;
  /** The characters gathered from one document at most; past it the rest is cut (truncated). */
  maxChars?: number;
}

export const DEFAULT_PAGE_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_CHARS = 16 * 1024 * 1024;

interface Task {
  job: ReadJob;
  maxMb: number;
  deadline: number;
  resolve: (d: ParsedDocument) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
  proc?: ParserProcess;
  signal?: AbortSignal;
  onAbort?: () => void;
  settled?: boolean;
}

const defaultProcesses = () => Math.max(1, Math.min(4, os.availableParallelism() - 1));

/**
 * PDF to text, in parser processes kept warm between documents (starting node and pdf.js costs
 * about 0.2 s; see bench/documents). Each has a data-segment limit and each parse a deadline; a
 * process that overruns either is killed (SIGKILL) and the document fails 502
 * document_too_complex, never sift. A process is replaced after it dies, after a document ran it
 * out of memory, and after `documentsPerProcess` documents; none outlives sift.
 */
export class DocumentParser {
  private readonly idle: ParserProcess[] = [];
  private readonly all = new Set<ParserProcess>();
  private readonly queue: Task[] = [];
  private readonly idleTimers = new Map<ParserProcess, NodeJS.Timeout>();
  private starting = 0;
  private closed = false;
  private readonly size: number;
  private readonly perProcess: number;
  private readonly pageTimeoutMs: number;
  private readonly idleMs: number;
  private readonly maxQueue: number;
  private readonly maxQueueBytes: number;
  private readonly maxChars: number;
  private childFile?: string;
  private readonly root = pdfjsRoot();

  constructor(opts: DocumentParserOptions = {}) {
    this.size = Math.max(1, opts.processes ?? defaultProcesses());
    this.perProcess = Math.max(1, opts.documentsPerProcess ?? 50);
    this.pageTimeoutMs = opts.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS;
    this.idleMs = opts.idleMs ?? 60_000;
    this.maxQueue = opts.maxQueue ?? 64;
    this.maxQueueBytes = opts.maxQueueBytes ?? 256 * 1024 * 1024;
    this.maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
  }

  /** Live parser processes' pids (for tests and benchmarks). */
  processes(): number[] {
    return [...this.all].map((p) => p.pid).filter((p): p is number => p !== undefined);
  }

  /**
   * The document as markdown, text and html with its metadata. Throws 400 invalid_request for a
   * bad `pages`, DocumentError (document_too_complex, unsupported_document, timeout) for a
   * document that cannot be read in its limits, 503 server_busy when too many wait.
   */
  parse(bytes: Buffer, opts: ParseOptions): Promise<ParsedDocument> {
    let ranges: PageRange[] | undefined;
    try {
      ranges = opts.pages === undefined ? undefined : parsePageRanges(opts.pages);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (this.closed) return Promise.reject(parserClosed());
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason as Error);
    const waiting = this.queue.reduce((n, t) => n + (t.proc ? 0 : t.job.bytes.length), 0);
    if (this.queue.length >= this.maxQueue || (waiting > 0 && waiting + bytes.length > this.maxQueueBytes))
      return Promise.reject(parserBusy());
    return new Promise<ParsedDocument>((resolve, reject) => {
      const task: Task = {
        job: { bytes, ranges, maxPages: opts.maxPages, maxChars: this.maxChars },
        maxMb: opts.maxMb,
        deadline: Date.now() + opts.deadlineMs,
        resolve,
        reject,
        signal: opts.signal,
      };
      task.timer = setTimeout(() => this.overrun(task, opts.deadlineMs), Math.max(0, opts.deadlineMs));
      if (opts.signal) {
        task.onAbort = () => this.abort(task);
        opts.signal.addEventListener('abort', task.onAbort, { once: true });
      }
      this.queue.push(task);
      this.dispatch();
    });
  }

  private settle(task: Task, result: ParsedDocument | Error): void {
    if (task.settled) return;
    task.settled = true;
    clearTimeout(task.timer);
    if (task.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
    const i = this.queue.indexOf(task);
    if (i >= 0) this.queue.splice(i, 1);
    if (result instanceof Error) task.reject(result);
    else task.resolve(result);
  }

  /**
   * The request's time is up: waiting, it times out; parsing, the document was too much for it,
   * said at once (the process is killed behind it).
   */
  private overrun(task: Task, ms: number): void {
    if (!task.proc) return this.settle(task, queuedTooLong(ms));
    task.proc.kill('deadline');
    this.settle(
      task,
      tooComplex('deadline', `the time allowed (${ms} ms) ran out while the document was read`),
    );
  }

  private abort(task: Task): void {
    task.proc?.kill('aborted');
    this.settle(task, task.signal?.reason as Error);
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const task of this.queue) {
      if (task.proc) continue;
      const proc = this.takeIdle(task.maxMb);
      if (proc) void this.start(task, proc);
    }
    // A process starts for each document still waiting, within the limit.
    const waiting = this.queue.filter((t) => !t.proc);
    for (let i = this.starting; i < waiting.length && this.all.size < this.size; i++)
      this.spawn(waiting[i].maxMb);
  }

  /** An idle process with this limit; one with another limit is ended to make room. */
  private takeIdle(maxMb: number): ParserProcess | undefined {
    const i = this.idle.findIndex((p) => p.limits.maxMb === maxMb);
    if (i >= 0) {
      const [proc] = this.idle.splice(i, 1);
      clearTimeout(this.idleTimers.get(proc));
      this.idleTimers.delete(proc);
      return proc;
    }
    if (this.idle.length > 0 && this.all.size >= this.size) this.retire(this.idle[0]);
    return undefined;
  }

  private spawn(maxMb: number): void {
    let proc: ParserProcess;
    try {
      this.childFile ??= childModule();
      proc = new ParserProcess(this.childFile, this.root, { maxMb });
    } catch (err) {
      // No process could be made now (no memory to fork, say): the document that waited for it
      // is told to try later, and sift goes on.
      const task = this.queue.find((t) => !t.proc && t.maxMb === maxMb);
      if (task) this.settle(task, parserBusy());
      void err;
      return;
    }
    this.all.add(proc);
    this.starting++;
    proc.hold(true);
    void proc.exit.then(() => this.gone(proc));
    proc.ready.then(
      () => {
        this.starting--;
        this.release(proc);
      },
      (err: Error) => {
        this.starting--;
        // It could not start: the first waiting document fails with the reason, so that a
        // limit too low for node to start is said, not waited out.
        const task = this.queue.find((t) => !t.proc && t.maxMb === maxMb);
        if (task) this.settle(task, new InternalFault('internal', err.message));
        proc.kill('start');
      },
    );
  }

  private async start(task: Task, proc: ParserProcess): Promise<void> {
    task.proc = proc;
    proc.hold(true);
    let page = 0;
    let pageTimer: NodeJS.Timeout | undefined;
    const watchPage = (n: number) => {
      page = n;
      clearTimeout(pageTimer);
      pageTimer = setTimeout(() => proc.kill('page_deadline'), this.pageTimeoutMs);
    };
    watchPage(0);
    const end = await proc.run(task.job, watchPage);
    clearTimeout(pageTimer);
    if ('died' in end || ('fail' in end && end.fail === 'memory')) this.retire(proc);
    else if (proc.documents >= this.perProcess) this.retire(proc);
    else this.release(proc);
    this.settle(task, 'died' in end || 'fail' in end ? failureOf(end, page, this.pageTimeoutMs) : end);
    this.dispatch();
  }

  /** Back to the idle list, ended after idleMs unused. */
  private release(proc: ParserProcess): void {
    if (proc.exited) return;
    if (this.closed) return this.retire(proc);
    proc.hold(false);
    this.idle.push(proc);
    const t = setTimeout(() => this.retire(proc), this.idleMs);
    t.unref();
    this.idleTimers.set(proc, t);
    this.dispatch();
  }

  private retire(proc: ParserProcess): void {
    const i = this.idle.indexOf(proc);
    if (i >= 0) this.idle.splice(i, 1);
    clearTimeout(this.idleTimers.get(proc));
    this.idleTimers.delete(proc);
    proc.kill('retired');
  }

  private gone(proc: ParserProcess): void {
    this.all.delete(proc);
    const i = this.idle.indexOf(proc);
    if (i >= 0) this.idle.splice(i, 1);
    clearTimeout(this.idleTimers.get(proc));
    this.idleTimers.delete(proc);
    if (!this.closed) this.dispatch();
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** Fails what waits and kills every parser process; resolves once they have all exited. */
  async close(): Promise<void> {
    this.closed = true;
    for (const task of [...this.queue]) if (!task.proc) this.settle(task, parserClosed());
    const procs = [...this.all];
    for (const p of procs) {
      p.hold(true); // until its exit is seen: close() resolves only then
      p.kill('closed');
    }
    await Promise.all(procs.map((p) => p.exit));
  }
}
