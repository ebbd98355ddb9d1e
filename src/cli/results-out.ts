// Where a job's results go (a file given with --out, or standard output), and the paging that
// writes them there as NDJSON.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { once } from 'node:events';
import { fail, getJson, jobPath, usage, type Api } from './client';

/**
 * Results as NDJSON, a whole line at a time, to a file or to standard output. The file is created
 * (or truncated) with the first line, never before: a command that writes nothing (interrupted,
 * cut off, or with nothing to write) leaves no empty file and does not truncate the lines an
 * earlier command wrote there.
 */
export class ResultsOut {
  private fd: number | undefined;
  written = 0;

  constructor(readonly file?: string) {
    if (file !== undefined) mustBeWritable(file);
  }

  get where(): string {
    return this.file ?? 'standard output';
  }

  /** The flag that sends results here again, for a hint. */
  get flag(): string {
    if (this.file === undefined) return '';
    return ` --out ${/^[\w./@%+=:,-]+$/.test(this.file) ? this.file : `'${this.file.replace(/'/g, `'\\''`)}'`}`;
  }

  /** What was written, for a message: "wrote 3 results to F", "nothing written to F". */
  get summary(): string {
    if (this.written === 0 && this.file !== undefined) return `nothing written to ${this.file}`;
    return `wrote ${this.written} result${this.written === 1 ? '' : 's'} to ${this.where}`;
  }

  async write(line: string): Promise<void> {
    if (this.file !== undefined) {
      this.fd ??= open(this.file);
      fs.writeSync(this.fd, line);
    } else if (!process.stdout.write(line)) await once(process.stdout, 'drain');
    this.written++;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Refuses an --out the command could not write before any work is asked of sift. */
function mustBeWritable(file: string): void {
  let problem: string | undefined;
  try {
    if (!fs.existsSync(file)) fs.accessSync(path.dirname(path.resolve(file)), fs.constants.W_OK);
    else if (fs.statSync(file).isDirectory()) problem = 'it is a directory';
    else fs.accessSync(file, fs.constants.W_OK);
  } catch (err) {
    problem = (err as Error).message;
  }
  if (problem) usage(`cannot write --out ${file}: ${problem}`);
}

function open(file: string): number {
  try {
    return fs.openSync(file, 'w');
  } catch (err) {
    fail(`cannot write --out ${file}: ${(err as Error).message}`);
  }
}

export interface ResultsQuery {
  verdict?: string;
  status?: string;
  /** Leave out targets that have no result yet (pending or running). */
  finishedOnly?: boolean;
}

/**
 * Pages through the job's results (`after` + `next`) and writes each as one NDJSON line. Stops
 * after a whole line when `signal` aborts. `complete` is false when it stopped early.
 */
export async function writeResults(
  a: Api,
  id: string,
  out: ResultsOut,
  q: ResultsQuery,
  signal: AbortSignal,
): Promise<{ complete: boolean; unfinished: number }> {
  let after = -1;
  let unfinished = 0;
  for (;;) {
    const params = new URLSearchParams({ after: String(after), limit: '1000' });
    if (q.verdict) params.set('verdict', q.verdict);
    if (q.status) params.set('status', q.status);
    let page: { results: { idx: number; status: string }[]; next: number | null };
    try {
      page = await getJson(a, `${jobPath(id)}/results?${params}`, signal);
    } catch (err) {
      if (signal.aborted) return { complete: false, unfinished };
      throw err;
    }
    for (const r of page.results) {
      if (signal.aborted) return { complete: false, unfinished };
      if (q.finishedOnly && (r.status === 'pending' || r.status === 'running')) unfinished++;
      else await out.write(`${JSON.stringify(r)}\n`);
    }
    if (page.next === null || page.next === undefined) return { complete: true, unfinished };
    after = page.next;
  }
}
