import { InternalFault } from '../common/errors';
import { childModule, pdfjsRoot } from './child-source';
import { codeReservation } from './code-reservation';
import { ParserProcess } from './parser-process';

/**
 * The parser processes, kept warm between documents (starting node and pdf.js costs about 0.2 s;
 * see bench/documents): at most `size` at once, each with the memory limit its document asks.
 * Which document gets one when is the scheduler's (DocumentParser); this keeps the processes.
 * One that has read `documentsPerProcess` documents is replaced without a wait: its successor
 * starts, and it reads on until the successor is ready (at most one more process meanwhile).
 */
export class ParserProcesses {
  private readonly idle: ParserProcess[] = [];
  private readonly all = new Set<ParserProcess>();
  private readonly idleTimers = new Map<ParserProcess, NodeJS.Timeout>();
  /** Processes past their documents whose successor is starting. */
  private readonly worn = new Set<ParserProcess>();
  /** Processes past their documents whose successor is ready: ended once given back. */
  private readonly replaced = new Set<ParserProcess>();
  private childFile?: string;
  private readonly root = pdfjsRoot();
  closed = false;

  constructor(
    private readonly size: number,
    private readonly opts: { documentsPerProcess: number; idleMs: number },
  ) {}

  /** Live processes' pids. */
  pids(): number[] {
    return [...this.all].map((p) => p.pid).filter((p): p is number => p !== undefined);
  }

  /**
   * A ready process with this memory limit: an idle one, or a new one (an idle one with another
   * limit is ended to make room). Throws 500 internal when one cannot start (the reason said, so
   * that a limit too low for node to start is told, not waited out).
   */
  async take(maxMb: number): Promise<ParserProcess> {
    const codeBytes = await codeReservation();
    const i = this.idle.findIndex((p) => p.limits.maxMb === maxMb);
    if (i >= 0) {
      const [proc] = this.idle.splice(i, 1);
      clearTimeout(this.idleTimers.get(proc));
      this.idleTimers.delete(proc);
      proc.hold(true);
      return proc;
    }
    if (this.idle.length > 0 && this.all.size >= this.size) this.retire(this.idle[0]);
    const proc = this.start(maxMb, codeBytes);
    proc.hold(true);
    try {
      await proc.ready;
    } catch (err) {
      proc.kill('start');
      throw new InternalFault('internal', (err as Error).message);
    }
    if (this.closed) {
      proc.kill('closed');
      throw new Error('the document parser is closed');
    }
    return proc;
  }

  private start(maxMb: number, codeBytes: number): ParserProcess {
    this.childFile ??= childModule();
    const proc = new ParserProcess(this.childFile, this.root, { maxMb, codeBytes });
    this.all.add(proc);
    void proc.exit.then(() => this.gone(proc));
    return proc;
  }

  /**
   * A process done with a document: kept warm, or ended when `failed` (it ran out of memory, say),
   * when its successor is ready, or when the pool has closed.
   */
  give(proc: ParserProcess, failed: boolean): void {
    if (proc.exited) return;
    if (failed || this.closed || this.replaced.has(proc)) return this.retire(proc);
    if (proc.documents >= this.opts.documentsPerProcess && !this.worn.has(proc)) this.succeed(proc);
    proc.hold(false);
    this.idle.push(proc);
    const t = setTimeout(() => this.retire(proc), this.opts.idleMs);
    t.unref();
    this.idleTimers.set(proc, t);
  }

  /** Starts the successor of a process worn by its documents; it is ended once that is ready. */
  private succeed(old: ParserProcess): void {
    this.worn.add(old);
    const next = this.start(old.limits.maxMb, old.limits.codeBytes);
    next.hold(false);
    // Ready: it takes the old one's place. Not started: the old one ends all the same, and the
    // next document starts a process of its own (whose failure it is told).
    const settle = (ok: boolean) => {
      this.worn.delete(old);
      if (ok && !next.exited) this.give(next, false);
      if (this.idle.includes(old)) this.retire(old);
      else if (!old.exited) this.replaced.add(old);
    };
    next.ready.then(
      () => settle(true),
      () => settle(false),
    );
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
    this.worn.delete(proc);
    this.replaced.delete(proc);
    const i = this.idle.indexOf(proc);
    if (i >= 0) this.idle.splice(i, 1);
    clearTimeout(this.idleTimers.get(proc));
    this.idleTimers.delete(proc);
  }

  /** Kills every process; resolves once they have all exited. */
  async close(): Promise<void> {
    this.closed = true;
    const procs = [...this.all];
    for (const p of procs) {
      p.hold(true); // until its exit is seen: close() resolves only then
      p.kill('closed');
    }
    await Promise.all(procs.map((p) => p.exit));
  }
}
