import * as os from 'node:os';
import { FairSlots, type Hold } from '../common/fair-slots';
import { failureOf, parserBusy, parserClosed, queuedTooLong, tooComplex } from './document-errors';
import { parsePageRanges, type PageRange } from './page-ranges';
import type { ParserProcess, RunEnd } from './parser-process';
import { ParserProcesses } from './parser-processes';
import type { OcrMode } from './ocr';
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
  /** Whose document it is (`class:name`): the parsers are shared fairly between callers. */
  caller?: string;
  /** OCR: `auto` (images, and pages with no text layer) when absent. */
  ocr?: OcrMode;
  /** The media type the document was served as (a CSV is known by it). */
  mediaType?: string;
}

export interface DocumentParserOptions {
  /** Parser processes at most (documents parsed at once); by default one per spare core, 2 to 4. */
  processes?: number;
  /**
   * A process is replaced after this many documents, its successor started as it reads on (and at
   * once after any that ran out of memory).
   */
  documentsPerProcess?: number;
  /** Opening the document, or one page, may take this long before the parse is too complex. */
  pageTimeoutMs?: number;
  /** CPU time one document may take (SIFT_PDF_MAX_CPU_MS) before it is too complex. */
  maxCpuMs?: number;
  /** An idle process ends after this long. */
  idleMs?: number;
  /** Documents that may wait for a parser; past it, 503 server_busy. */
  maxQueue?: number;
  /** Bytes of documents that may wait for a parser (held in memory meanwhile); past it, 503. */
  maxQueueBytes?: number;
  /** The characters gathered from one document at most; past it the rest is cut (truncated). */
  maxChars?: number;
  /** Tesseract's languages for OCR ("eng+deu"; SIFT_OCR_LANGS). */
  ocrLangs?: string;
}

export const DEFAULT_PAGE_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_CPU_MS = 10_000;
export const DEFAULT_MAX_CHARS = 16 * 1024 * 1024;
/** A document's CPU time is read this often while it is parsed. */
const CPU_READ_MS = 250;

/**
 * Two at least, so that one caller's costly document does not hold every parser: another caller
 * waiting takes the second (or the first's place, see FairSlots) at once.
 */
export const defaultParserProcesses = (): number => Math.max(2, Math.min(4, os.availableParallelism() - 1));

/** The request's time ran out: waiting, it is a timeout; parsing, the document was too much. */
class Overrun extends Error {}

/**
 * PDF to text, in parser processes kept warm between documents (ParserProcesses), handed out by
 * the one fair scheduler: callers take turns, none holds more than its share while another waits,
 * and a document over its caller's share gives its process up for a caller waiting under its own
 * (it starts again later, within its own deadline). Each process has a data-segment limit; each
 * document a deadline, a time per page and a CPU budget: past any, its process is killed (SIGKILL)
 * and the document fails 502 document_too_complex, never sift.
 */
export class DocumentParser {
  private readonly slots: FairSlots;
  private readonly procs: ParserProcesses;
  private readonly pageTimeoutMs: number;
  private readonly maxCpuMs: number;
  private readonly maxQueue: number;
  private readonly maxQueueBytes: number;
  private readonly maxChars: number;
  private readonly ocrLangs: string;
  /** Documents waiting for a parser, and their bytes (held in memory meanwhile). */
  private waiting = 0;
  private waitingBytes = 0;
  private closed = false;
  /** Aborts every parse when the parser closes. */
  private readonly closing = new AbortController();

  constructor(opts: DocumentParserOptions = {}) {
    const size = Math.max(1, opts.processes ?? defaultParserProcesses());
    this.slots = new FairSlots(size);
    this.procs = new ParserProcesses(size, {
      documentsPerProcess: Math.max(1, opts.documentsPerProcess ?? 2000),
      idleMs: opts.idleMs ?? 60_000,
    });
    this.pageTimeoutMs = opts.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS;
    this.maxCpuMs = opts.maxCpuMs ?? DEFAULT_MAX_CPU_MS;
    this.maxQueue = opts.maxQueue ?? 64;
    this.maxQueueBytes = opts.maxQueueBytes ?? 256 * 1024 * 1024;
    this.maxChars = opts.maxChars ?? DEFAULT_MAX_CHARS;
    this.ocrLangs = opts.ocrLangs ?? 'eng';
  }

  /** Live parser processes' pids (for tests and benchmarks). */
  processes(): number[] {
    return this.procs.pids();
  }

  /**
   * The document as markdown, text and html with its metadata. Throws 400 invalid_request for a
   * bad `pages`, DocumentError (document_too_complex, unsupported_document, timeout) for a
   * document that cannot be read in its limits, 503 server_busy when too many wait.
   */
  async parse(bytes: Buffer, opts: ParseOptions): Promise<ParsedDocument> {
    const ranges: PageRange[] | undefined =
      opts.pages === undefined ? undefined : parsePageRanges(opts.pages);
    if (this.closed) throw parserClosed();
    if (opts.signal?.aborted) throw opts.signal.reason as Error;
    if (
      this.waiting >= this.maxQueue ||
      (this.waitingBytes > 0 && this.waitingBytes + bytes.length > this.maxQueueBytes)
    )
      throw parserBusy();
    const job: ReadJob = {
      bytes,
      ranges,
      maxPages: opts.maxPages,
      maxChars: this.maxChars,
      ocr: opts.ocr,
      mediaType: opts.mediaType,
      ocrLimits: { langs: this.ocrLangs, cpuS: this.maxCpuMs / 1000 },
    };
    const ms = opts.deadlineMs;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Overrun()), Math.max(0, ms));
    const stop = AbortSignal.any([ac.signal, this.closing.signal, ...(opts.signal ? [opts.signal] : [])]);
    try {
      for (let again = false; ; again = true) {
        const hold = await this.turn(opts.caller ?? '', bytes.length, stop, again).catch((err: unknown) => {
          throw err instanceof Overrun ? queuedTooLong(ms) : err;
        });
        try {
          const end = await this.run(hold, job, opts.maxMb, stop);
          if (end === 'preempted') continue;
          if (end instanceof Error) throw end;
          return end;
        } finally {
          hold.release();
        }
      }
    } catch (err) {
      if (err instanceof Overrun)
        throw tooComplex('deadline', `the time allowed (${ms} ms) ran out while the document was read`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A place among the parsers, in the caller's turn; counted as waiting meanwhile. */
  private async turn(caller: string, bytes: number, stop: AbortSignal, again: boolean): Promise<Hold> {
    this.waiting++;
    this.waitingBytes += bytes;
    try {
      return await this.slots.acquire(caller, { signal: stop, preemptible: true, front: again });
    } finally {
      this.waiting--;
      this.waitingBytes -= bytes;
    }
  }

  /**
   * The document read in a process: the document, the failure it ended in, or `preempted` (its
   * process was ended to give its place to another caller). Throws when `stop` aborts first.
   */
  private async run(
    hold: Hold,
    job: ReadJob,
    maxMb: number,
    stop: AbortSignal,
  ): Promise<ParsedDocument | Error | 'preempted'> {
    // A process that could not start because the parse was stopped meanwhile: the stop says why.
    const proc = await this.procs.take(maxMb).catch((err: unknown) => {
      throw stop.aborted ? (stop.reason as Error) : err;
    });
    // Given up for another caller while its process started: the process stays warm for it.
    if (hold.preempted.aborted) {
      this.procs.give(proc, false);
      return 'preempted';
    }
    let page = 0;
    let pageTimer: NodeJS.Timeout | undefined;
    const watchPage = (n: number) => {
      page = n;
      clearTimeout(pageTimer);
      pageTimer = setTimeout(() => proc.kill('page_deadline'), this.pageTimeoutMs);
    };
    const onStop = () => proc.kill(stop.reason instanceof Overrun ? 'deadline' : 'aborted');
    const onPreempt = () => proc.kill('preempted');
    stop.addEventListener('abort', onStop, { once: true });
    hold.preempted.addEventListener('abort', onPreempt, { once: true });
    const cpu = this.watchCpu(proc);
    watchPage(0);
    let end: ParsedDocument | RunEnd;
    try {
      end = stop.aborted
        ? { died: true, killed: 'aborted', signal: null, code: null, stderr: '' }
        : await proc.run(job, watchPage);
    } finally {
      clearTimeout(pageTimer);
      clearInterval(cpu);
      stop.removeEventListener('abort', onStop);
      hold.preempted.removeEventListener('abort', onPreempt);
    }
    if ('died' in end || 'fail' in end) {
      this.procs.give(proc, 'died' in end || end.fail === 'memory');
      if (stop.aborted) throw stop.reason;
      if ('died' in end && end.killed === 'preempted') return 'preempted';
      return failureOf(end, page, { pageTimeoutMs: this.pageTimeoutMs, maxCpuMs: this.maxCpuMs });
    }
    this.procs.give(proc, false);
    if (stop.aborted) throw stop.reason;
    return end;
  }

  /** Reads the process's CPU time as it parses: past the budget, it is killed ('cpu'). */
  private watchCpu(proc: ParserProcess): NodeJS.Timeout {
    let start: number | undefined;
    const read = () => {
      const ms = proc.cpuMs();
      if (ms === undefined) return;
      start ??= ms;
      if (ms - start > this.maxCpuMs) proc.kill('cpu');
    };
    read();
    return setInterval(read, CPU_READ_MS);
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** Fails what waits and kills every parser process; resolves once they have all exited. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort(parserClosed());
    await this.procs.close();
  }
}
