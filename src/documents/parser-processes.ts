import { InternalFault } from '../common/errors';
import { childModule, pdfjsRoot } from './child-source';
import { codeReservation } from './code-reservation';
import { ParserProcess } from './parser-process';

/**
 * The parser processes, kept warm between documents (starting node and pdf.js costs about 0.2 s;
 * see bench/documents): at most `size` at once, each with the memory limit its document asks.
 * Which document gets one when is the scheduler's (DocumentParser); this keeps the processes.
 */
export class ParserProcesses {
  private readonly idle: ParserProcess[] = [];
  private readonly all = new Set<ParserProcess>();
  private readonly idleTimers = new Map<ParserProcess, NodeJS.Timeout>();
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
    this.childFile ??= childModule();
    const proc = new ParserProcess(this.childFile, this.root, { maxMb, codeBytes });
    this.all.add(proc);
    proc.hold(true);
    void proc.exit.then(() => this.gone(proc));
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

  /** A process done with a document: kept warm, or ended when it is worn (or the pool closed). */
  give(proc: ParserProcess, worn: boolean): void {
    if (proc.exited) return;
    if (worn || this.closed || proc.documents >= this.opts.documentsPerProcess) return this.retire(proc);
    proc.hold(false);
    this.idle.push(proc);
    const t = setTimeout(() => this.retire(proc), this.opts.idleMs);
    t.unref();
    this.idleTimers.set(proc, t);
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
