// Following a job: its progress from the event stream, its results as NDJSON (to a file or to
// standard output, paged through the API), and what Ctrl-C leaves behind and says.
import * as fs from 'node:fs';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, call, EXIT, fail, getJson, jobPath, usage, type Api } from './client';

export interface JobView {
  id: string;
  status: string;
  targets_total: number;
  targets_done: number;
  targets_failed: number;
  targets_cancelled?: number;
}

const ENDED = new Set(['done', 'partial', 'failed', 'cancelled']);
/** How long results are still fetched after Ctrl-C (a second Ctrl-C stops at once). */
const AFTER_INTERRUPT_MS = 10_000;
/** Times an event stream that ends before its job may be opened again. */
const REOPENS = 5;

/** Ctrl-C: the first aborts `signal` so the command can write what came; the second exits at once. */
export class Interrupt {
  private readonly ctl = new AbortController();
  readonly signal = this.ctl.signal;

  constructor() {
    process.on('SIGINT', () => {
      if (this.signal.aborted) process.exit(EXIT.interrupted);
      this.ctl.abort();
    });
  }
}

/** Where results go: a file (--out), written a whole line at a time, or standard output. */
export class ResultsOut {
  private readonly fd: number | undefined;
  written = 0;

  constructor(readonly file?: string) {
    if (file === undefined) return;
    try {
      this.fd = fs.openSync(file, 'w');
    } catch (err) {
      usage(`cannot write --out ${file}: ${(err as Error).message}`);
    }
  }

  get where(): string {
    return this.file ?? 'standard output';
  }

  /** The flag that sends results here again, for a hint. */
  get flag(): string {
    if (this.file === undefined) return '';
    return ` --out ${/^[\w./@%+=:,-]+$/.test(this.file) ? this.file : `'${this.file.replace(/'/g, `'\\''`)}'`}`;
  }

  async write(line: string): Promise<void> {
    this.written++;
    if (this.fd !== undefined) fs.writeSync(this.fd, line);
    else if (!process.stdout.write(line)) await once(process.stdout, 'drain');
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
  }
}

function progress(done: number, total: number, failed: number): void {
  if (!process.stderr.isTTY && done < total) return;
  const width = 30;
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : width;
  process.stderr.write(
    `\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}${failed ? ` (${failed} failed)` : ''}`,
  );
  if (done >= total) process.stderr.write('\n');
}

/** A target's end in the event stream: a batch's target.done/failed, or a crawl's crawl.page. */
interface TargetEnd {
  idx?: number;
  status?: string;
  /** A crawl's page: the links it added to the job. */
  added?: number;
}

/**
 * Shows the job's progress from its event stream until its terminal event, opening the stream
 * again (from the last event) if it ends early. A crawl's total grows by each page's `added`
 * (its seed is its one first target); events replayed from the start never count twice. The
 * job's final status, or undefined when interrupted.
 */
export async function followEvents(a: Api, job: JobView, signal: AbortSignal): Promise<string | undefined> {
  const finished = new Set<number>();
  let failed = 0;
  let lastSeq = 0;
  let total = job.targets_total;
  let added = 0;
  for (let opened = 0; ; opened++) {
    let status: string | undefined;
    let res;
    try {
      res = await call(a, 'GET', `${jobPath(job.id)}/events`, {
        accept: 'text/event-stream',
        headers: lastSeq > 0 ? { 'last-event-id': String(lastSeq) } : {},
        signal,
      });
    } catch (err) {
      if (signal.aborted) return undefined;
      throw err;
    }
    try {
      let buf = '';
      for await (const chunk of res.body) {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const type = /^event: (.+)$/m.exec(block)?.[1];
          lastSeq = Number(/^id: (\d+)$/m.exec(block)?.[1] ?? lastSeq);
          if (type === 'target.done' || type === 'target.failed' || type === 'crawl.page') {
            const data = /^data: (.+)$/m.exec(block)?.[1];
            const end = (JSON.parse(data ?? '{}') as { data?: TargetEnd }).data ?? {};
            const idx = end.idx ?? -lastSeq;
            if (!finished.has(idx)) {
              finished.add(idx);
              if (type === 'target.failed' || end.status === 'failed') failed++;
              if (type === 'crawl.page') {
                added += end.added ?? 0;
                total = Math.max(total, 1 + added);
              }
              progress(finished.size, total, failed);
            }
          } else if (type && /^batch\.(done|partial|failed|cancelled)$/.test(type)) {
            status = type.slice('batch.'.length);
          }
        }
      }
    } catch {
      // Interrupted, or the stream was cut off: then the job's state says whether to open it again.
      if (signal.aborted) return undefined;
    }
    if (process.stderr.isTTY && finished.size < total) process.stderr.write('\n');
    if (status) return status;
    const view = await getJson<JobView>(a, jobPath(job.id), signal).catch((err: unknown) => {
      if (signal.aborted) return undefined;
      throw err;
    });
    if (!view) return undefined;
    if (ENDED.has(view.status)) return view.status;
    if (opened >= REOPENS)
      fail(`the event stream of job ${job.id} keeps ending; follow it with: sift watch ${job.id}`);
    await sleep(1000, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return undefined;
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

/** What an interrupted command leaves: what it wrote, and how to go on or stop the job. */
export function interrupted(id: string, out: ResultsOut | undefined, live: boolean): void {
  const lines: string[] = [];
  const wrote = out ? `wrote ${out.written} result${out.written === 1 ? '' : 's'} to ${out.where}` : '';
  if (live) {
    lines.push(`interrupted; ${wrote ? `${wrote}; ` : ''}job ${id} goes on running on the server`);
    lines.push(`follow it:      sift watch ${id}${out?.flag ?? ''}`);
    lines.push(`all results:    sift results ${id}${out?.flag ?? ''}   (once it has ended)`);
    lines.push(`or cancel it:   sift cancel ${id}`);
  } else {
    lines.push(`interrupted; ${wrote ? `${wrote}; ` : ''}job ${id} has ended`);
    lines.push(`all results:    sift results ${id}${out?.flag ?? ''}`);
  }
  console.error(lines.map((l) => `sift: ${l}`).join('\n'));
  process.exitCode = EXIT.interrupted;
}

/** One line on how the job ended; exit code 3 unless every target is done. */
export function ended(view: JobView): void {
  const cancelled = view.targets_cancelled ? `, ${view.targets_cancelled} cancelled` : '';
  const failed = view.targets_failed ? `, ${view.targets_failed} failed` : '';
  console.error(
    `job ${view.id} ${view.status}: ${view.targets_done}/${view.targets_total} finished${failed}${cancelled}`,
  );
  if (view.status !== 'done') process.exitCode = EXIT.partial;
}

/**
 * Follows a job to its end, then (with `results`) writes its results. Ctrl-C while the job runs
 * writes the results finished so far; either way the command says how to resume or cancel. `stop`
 * is made before the line that says the job is followed is printed: a Ctrl-C that comes after
 * that line must find it there.
 */
export async function followJob(
  job: JobView,
  out: ResultsOut | undefined,
  stop: Interrupt,
  a: Api = api(),
): Promise<void> {
  try {
    const status = await followEvents(a, job, stop.signal);
    if (status === undefined) {
      if (out) {
        await writeResults(
          a,
          job.id,
          out,
          { finishedOnly: true },
          AbortSignal.timeout(AFTER_INTERRUPT_MS),
        ).catch((err: unknown) =>
          console.error(`sift: could not fetch the results so far: ${(err as Error).message}`),
        );
      }
      return interrupted(job.id, out, true);
    }
    const view = await getJson<JobView>(a, jobPath(job.id));
    ended(view);
    if (out && !(await writeResults(a, job.id, out, {}, stop.signal)).complete)
      interrupted(job.id, out, false);
  } finally {
    out?.close();
  }
}

export const isEnded = (status: string) => ENDED.has(status);
