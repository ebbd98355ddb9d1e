/**
 * bench/documents: pages per second on a 200-page text document, sift's DocumentParser (a warm
 * parser process under its limits: layout, three formats, the IPC channel) against pdf.js called
 * directly in this process (getDocument, getTextContent on every page, the strings joined),
 * alternating rounds, medians reported; CPU time per page and peak RSS beside them. Then what a
 * warm process saves against one started per document, on one page and on 200.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DocumentParser } from '../src/documents';
import { manyPages } from '../test/support/pdf-documents';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Documents parsed per round, each way. */
const PER_ROUND = Number(process.env.BENCH_DOCS ?? 2);
const OPTS = { maxPages: 500, maxMb: 256, deadlineMs: 120_000 };

type PdfJs = typeof import('pdfjs-dist');

/** pdf.js's legacy build is an ES module: imported as one (TypeScript would make import() a require). */
const importModule = new Function('s', 'return import(s)') as (s: string) => Promise<unknown>;

export async function loadPdfJs(): Promise<PdfJs> {
  const root = path.resolve(path.dirname(require.resolve('pdfjs-dist')), '..');
  return (await importModule(path.join(root, 'legacy', 'build', 'pdf.mjs'))) as PdfJs;
}

/** The text of every page, as a user of the library would get it. */
async function direct(pdfjs: PdfJs, bytes: Buffer): Promise<number> {
  const doc = await pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
  let chars = 0;
  for (let n = 1; n <= doc.numPages; n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    chars += content.items.map((i) => ('str' in i ? i.str : '')).join('').length;
    page.cleanup();
  }
  await doc.destroy();
  return chars;
}

/** Status fields of a process, in bytes; CPU seconds from its stat. */
export function proc(pid: number): { rss: number; hwm: number; cpu: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { rss: kb('VmRSS'), hwm: kb('VmHWM'), cpu: (Number(f[11]) + Number(f[12])) / 100 };
  } catch {
    return undefined;
  }
}

export interface Round {
  pagesPerS: number;
  cpuMsPerPage: number;
  peakRssMb: number;
}

/**
 * Runs `once` PER_ROUND times; CPU of this process (unless not `ownToo`: the work is all elsewhere) and
 * of `pids()` (read as they run), peak RSS of the same.
 */
export async function round(
  once: () => Promise<void>,
  pids: () => number[],
  pages: number,
  ownToo = true,
): Promise<Round> {
  const cpu = new Map<number, { first: number; last: number }>();
  let peak = 0;
  const sample = () => {
    let rss = ownToo ? (proc(process.pid)?.rss ?? 0) : 0;
    for (const pid of pids()) {
      const p = proc(pid);
      if (!p) continue;
      rss += p.rss;
      const c = cpu.get(pid);
      cpu.set(pid, { first: c?.first ?? p.cpu, last: p.cpu });
    }
    peak = Math.max(peak, rss);
  };
  sample();
  const timer = setInterval(sample, 25);
  const own = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < PER_ROUND; i++) await once();
  const seconds = (performance.now() - started) / 1000;
  sample();
  clearInterval(timer);
  const mine = process.cpuUsage(own);
  let children = 0;
  for (const c of cpu.values()) children += c.last - c.first;
  const n = pages * PER_ROUND;
  return {
    pagesPerS: n / seconds,
    cpuMsPerPage: ((ownToo ? (mine.user + mine.system) / 1000 : 0) + children * 1000) / n,
    peakRssMb: peak / 1048576,
  };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Milliseconds per document, median of `n`, with a parser that keeps its process warm or a new one each time. */
async function perDocument(bytes: Buffer, warm: boolean, n: number): Promise<number> {
  const kept = new DocumentParser({ processes: 1 });
  try {
    await kept.parse(bytes, OPTS); // node and its files are loaded either way
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const parser = warm ? kept : new DocumentParser({ processes: 1 });
      const t = performance.now();
      await parser.parse(bytes, OPTS);
      ms.push(performance.now() - t);
      if (!warm) await parser.close();
    }
    return median(ms);
  } finally {
    await kept.close();
  }
}

export async function benchDocuments(): Promise<Record<string, number | string>> {
  const bytes = await manyPages(200);
  const pdfjs = await loadPdfJs();
  const parser = new DocumentParser({ processes: 1 });
  const out: Record<string, number | string> = {};
  try {
    await parser.parse(bytes, OPTS); // warm: the process has started and loaded pdf.js
    await direct(pdfjs, bytes);
    const s: Round[] = [];
    const d: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      s.push(
        await round(
          async () => void (await parser.parse(bytes, OPTS)),
          () => parser.processes(),
          200,
        ),
      );
      d.push(
        await round(
          async () => void (await direct(pdfjs, bytes)),
          () => [],
          200,
        ),
      );
    }
    const sp = median(s.map((x) => x.pagesPerS));
    const dp = median(d.map((x) => x.pagesPerS));
    out[`200 pages: sift pages/s (median of ${ROUNDS})`] = +sp.toFixed(1);
    out['200 pages: pdf.js direct pages/s'] = +dp.toFixed(1);
    out['200 pages: sift/direct (goal >= 0.8)'] = +(sp / dp).toFixed(2);
    out['200 pages: CPU ms per page, sift (both processes) / direct'] =
      `${median(s.map((x) => x.cpuMsPerPage)).toFixed(2)} / ${median(d.map((x) => x.cpuMsPerPage)).toFixed(2)}`;
    out['200 pages: peak RSS MB, sift (this process + parser) / direct (this process)'] =
      `${Math.round(Math.max(...s.map((x) => x.peakRssMb)))} / ${Math.round(Math.max(...d.map((x) => x.peakRssMb)))}`;
    const parserPeak = Math.max(...parser.processes().map((p) => proc(p)?.hwm ?? 0));
    out['200 pages: parser process peak RSS MB (VmHWM)'] = Math.round(parserPeak / 1048576);
  } finally {
    await parser.close();
  }
  const one = await manyPages(1);
  out['1 page: ms per document, warm process / a process each'] =
    `${(await perDocument(one, true, 9)).toFixed(1)} / ${(await perDocument(one, false, 9)).toFixed(1)}`;
  out['200 pages: ms per document, warm process / a process each'] =
    `${(await perDocument(bytes, true, 3)).toFixed(0)} / ${(await perDocument(bytes, false, 3)).toFixed(0)}`;
  return out;
}
