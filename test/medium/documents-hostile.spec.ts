import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DocumentParser, type DocumentError, type ParsedDocument } from '../../src/documents';
import { codeIn } from '../../src/documents/code-reservation';
import { watchReading } from '../support/parser-watch';
import { manyPages, onePage } from '../support/pdf-documents';
import {
  cyclicPages,
  cyclicXref,
  deflateBomb,
  encryptedDocument,
  millionPages,
  notPdf,
} from '../support/pdf-hostile';
import { processRuns, ROOT } from '../support/process';
import { waitUntil } from '../support/wait';

/**
 * Documents made to hurt: each costs a bounded amount of memory and time in a parser process,
 * fails with a code the pipeline maps, and leaves sift (this process) serving.
 */

const OPTS = { maxPages: 500, maxMb: 256, deadlineMs: 30_000 };
const MB = 1024 * 1024;
const settled = (p: Promise<ParsedDocument>) => p.catch((e: DocumentError) => e);

/** Memory of a process from /proc, in bytes: its resident high-water mark and its anonymous RSS. */
function memory(pid: number): { hwm: number; anon: number } | undefined {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) * 1024;
    return { hwm: kb('VmHWM'), anon: kb('RssAnon') };
  } catch {
    return undefined;
  }
}

/** A process's data-segment limit (RLIMIT_DATA), bytes, as the kernel holds it. */
function dataLimit(pid: number): number {
  const line = /^Max data size\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'));
  return Number(line?.[1]);
}

let parser: DocumentParser;
beforeAll(() => {
  parser = new DocumentParser({ processes: 1 });
});
afterAll(() => parser.close());

describe('a deflate bomb', () => {
  it('~1 MB inflating to 300 MB: document_too_complex by its memory limit before its deadline, its process under the limit, sift responsive', async () => {
    const bomb = await deflateBomb('text', 300);
    expect(bomb.length).toBeGreaterThan(0.5 * MB);
    expect(bomb.length).toBeLessThan(1.5 * MB);
    await parser.parse(await onePage(), OPTS); // a warm process: the time below is the bomb's
    // Its limit is the document's 256 MB and the code a node reserves as it starts, not the code
    // this busy process has compiled since (5 MB in this suite alone, and the bomb's memory with it).
    const [pid] = parser.processes();
    const limit = dataLimit(pid);
    const fresh = codeIn(
      execFileSync(process.execPath, ['-e', 'process.stdout.write(fs.readFileSync("/proc/self/maps"))'], {
        encoding: 'utf8',
      }),
    );
    expect(limit).toBeLessThanOrEqual(256 * MB + fresh + MB); // a page or two may differ: not 5 MB
    let peakHwm = 0;
    let peakAnon = 0;
    let sampled = 0;
    let last = performance.now();
    let lateness = 0;
    const probe = setInterval(() => {
      for (const pid of parser.processes()) {
        const m = memory(pid);
        if (!m) continue;
        sampled++;
        peakHwm = Math.max(peakHwm, m.hwm);
        peakAnon = Math.max(peakAnon, m.anon);
      }
    }, 10);
    // A timer due every 50 ms: how late it ever fires says how free sift's event loop was.
    const tick = setInterval(() => {
      const now = performance.now();
      lateness = Math.max(lateness, now - last - 50);
      last = now;
    }, 50);
    const started = performance.now();
    const err = await settled(parser.parse(bomb, OPTS));
    const took = performance.now() - started;
    clearInterval(probe);
    clearInterval(tick);
    // Ended by its memory limit, long before its deadline (alone about 2 s; 6.4 s and 10 s seen
    // with other suites on the cores): the failure names the limit, the time only the deadline.
    expect(err).toMatchObject({ code: 'document_too_complex', status: 502, failure: 'memory' });
    expect(took).toBeLessThan(OPTS.deadlineMs * 0.75);
    expect(sampled).toBeGreaterThan(10);
    // Anonymous memory (heaps and buffers) stays within it, but for the main thread's stack (V8
    // keeps it under 1 MB), which the limit does not count; the high-water mark adds node's own
    // code, mapped from its file.
    expect(peakAnon).toBeLessThanOrEqual(limit + MB);
    expect(peakHwm).toBeLessThan((256 + 80) * MB);
    expect(peakHwm).toBeGreaterThan(150 * MB); // it did reach for the limit
    // The parse is another process's: this thread's timer is late only when the cores are busy
    // (292 ms seen inside the whole suite). A parse held on this thread would hold it for the
    // whole parse, seconds.
    expect(lateness).toBeLessThan(1000);
    expect((await parser.parse(await onePage(), OPTS)).hasText).toBe(true);
  }, 60_000);

  it('an allocation failure pdf.js would skip (leaving the text beside it) still fails the document', async () => {
    // With room to go on, pdf.js drops the stream it could not inflate, logs it, and returns the
    // page's other text; the parser reads its log and fails the document instead.
    // The page's own deadline is the request's here: inflating 300 MB beside the suite's other
    // worker took over the default 10 s once (Node 24, page_deadline), and time is not what this
    // test is about.
    const roomy = new DocumentParser({ processes: 1, pageTimeoutMs: OPTS.deadlineMs });
    try {
      const err = await settled(roomy.parse(await deflateBomb('blank', 300), { ...OPTS, maxMb: 512 }));
      expect(err).toMatchObject({ code: 'document_too_complex', failure: 'memory' });
      expect((err as Error).message).toMatch(/Array buffer allocation failed/);
    } finally {
      await roomy.close();
    }
  }, 60_000);

  it('a page that takes longer than a page may is document_too_complex, whatever memory it has', async () => {
    const slow = new DocumentParser({ processes: 1, pageTimeoutMs: 1000 });
    try {
      const bomb = await deflateBomb('text', 300);
      const started = Date.now();
      const err = await settled(slow.parse(bomb, { ...OPTS, maxMb: 4096 }));
      // The page's deadline ended it (the failure says so), not the document's 30 s: alone in
      // about 2 s, 7 s seen with the suite's other worker on the cores.
      expect(err).toMatchObject({ code: 'document_too_complex', failure: 'page_deadline' });
      expect((err as Error).message).toContain('page 1 took over 1000 ms');
      expect(Date.now() - started).toBeLessThan(OPTS.deadlineMs / 2);
    } finally {
      await slow.close();
    }
  }, 60_000);
});

describe('broken and hostile structure', () => {
  it('a cross-reference table that names itself as the previous one: read, quickly', async () => {
    const started = Date.now();
    const doc = await parser.parse(cyclicXref(), OPTS);
    expect(doc.text).toBe('Cyclic xref page');
    expect(Date.now() - started).toBeLessThan(OPTS.deadlineMs / 2); // no loop ran it to its deadline
  });

  it('a page tree that contains itself: the pages it has are read, quickly', async () => {
    const started = Date.now();
    const doc = await parser.parse(cyclicPages(), OPTS);
    expect(doc.text).toBe('Cyclic tree page');
    expect(Date.now() - started).toBeLessThan(OPTS.deadlineMs / 2); // no loop ran it to its deadline
  });

  it('a million pages claimed: the pages it has, counted as they are, quickly', async () => {
    const started = Date.now();
    const doc = await parser.parse(millionPages(), { ...OPTS, maxPages: 500 });
    expect(doc).toMatchObject({ text: 'The only page', metadata: { pages: 1 }, truncated: false });
    expect(Date.now() - started).toBeLessThan(OPTS.deadlineMs / 2); // no loop ran it to its deadline
  });

  it('a truncated file: without its last lines it is repaired and read; cut before its trailer it is unsupported_document', async () => {
    const whole = await manyPages(3);
    // No startxref and no %%EOF: the objects are indexed again and the trailer found.
    const noEnd = whole.subarray(0, whole.lastIndexOf('startxref'));
    const repaired = await parser.parse(noEnd, OPTS);
    expect(repaired.markdown.match(/^# Chapter \d$/gm)).toEqual([
      '# Chapter 1',
      '# Chapter 2',
      '# Chapter 3',
    ]);
    for (const cut of [40, whole.lastIndexOf('endobj'), whole.length >> 1]) {
      const err = await settled(parser.parse(whole.subarray(0, cut), OPTS));
      expect(err).toMatchObject({ code: 'unsupported_document', status: 502, failure: 'unreadable' });
    }
  });

  it('an encrypted document that needs a password: unsupported_document with a hint', async () => {
    const err = await settled(parser.parse(encryptedDocument(), OPTS));
    expect(err).toMatchObject({
      code: 'unsupported_document',
      status: 502,
      failure: 'encrypted',
      message: 'the document is encrypted and needs a password',
    });
    expect((err as DocumentError).hint).toContain('without a password');
  });

  it('noise after %PDF-: unsupported_document', async () => {
    const err = await settled(parser.parse(notPdf(), OPTS));
    expect(err).toMatchObject({ code: 'unsupported_document', failure: 'unreadable' });
  });
});

describe('parser processes end', () => {
  it('a process killed mid-parse fails that document only; the next parse works in a new one', async () => {
    const p = new DocumentParser({ processes: 1 });
    const watch = watchReading();
    try {
      await p.parse(await onePage(), OPTS);
      const [pid] = p.processes();
      const running = settled(p.parse(await manyPages(200), OPTS));
      await waitUntil(() => (watch.reading().includes(pid) ? true : undefined), 'the parser to read a page');
      process.kill(pid, 'SIGKILL');
      expect(await running).toMatchObject({ code: 'document_too_complex', failure: 'crashed' });
      expect((await p.parse(await onePage(), OPTS)).hasText).toBe(true);
      expect(p.processes()).not.toContain(pid);
    } finally {
      watch.restore();
      await p.close();
    }
  });

  it('close() ends every parser process, busy or idle', async () => {
    const p = new DocumentParser({ processes: 2 });
    const doc = await manyPages(100);
    const watch = watchReading();
    const running = [settled(p.parse(doc, OPTS)), settled(p.parse(doc, OPTS))];
    const pids = await waitUntil(
      () => (watch.reading().length === 2 ? p.processes() : undefined),
      'two processes reading a page each',
    ).finally(watch.restore);
    await p.close();
    expect(pids.filter(processRuns)).toEqual([]);
    // What was being read, and what is asked after, is told to come back: 503, never a fault.
    for (const e of [...(await Promise.all(running)), await settled(p.parse(doc, OPTS))])
      expect(e).toMatchObject({ status: 503, code: 'server_busy' });
  });

  it('close() resolves once its processes have exited, in a process with nothing else to wait for', async () => {
    const script = `
      const { DocumentParser } = require(${JSON.stringify(path.join(ROOT, 'src', 'documents'))});
      const { onePage } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'pdf-documents'))});
      const p = new DocumentParser({ processes: 1 });
      onePage().then(async (doc) => {
        await p.parse(doc, { maxPages: 5, maxMb: 256, deadlineMs: 60000 });
        const pids = p.processes();
        await p.close();
        console.log(JSON.stringify({ pids, left: p.processes() }));
      });`;
    const out = await new Promise<string>((resolve, reject) => {
      let text = '';
      const child = spawn(
        process.execPath,
        ['-r', path.join(ROOT, 'test', 'support', 'ts-hook.js'), '-e', script],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      child.stdout.on('data', (b: Buffer) => (text += b.toString()));
      child.on('error', reject);
      child.on('exit', () => resolve(text));
    });
    const { pids, left } = JSON.parse(out) as { pids: number[]; left: number[] };
    expect(pids).toHaveLength(1);
    expect(left).toEqual([]);
    expect(pids.filter(processRuns)).toEqual([]);
  }, 60_000);

  it('no parser process outlives a SIGKILLed sift', async () => {
    const script = `
      const { DocumentParser } = require(${JSON.stringify(path.join(ROOT, 'src', 'documents'))});
      const { manyPages } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'pdf-documents'))});
      const { watchReading } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'parser-watch'))});
      const { waitUntil } = require(${JSON.stringify(path.join(ROOT, 'test', 'support', 'wait'))});
      const p = new DocumentParser({ processes: 1 });
      const watch = watchReading();
      manyPages(200).then(async (doc) => {
        const first = p.parse(doc, { maxPages: 500, maxMb: 256, deadlineMs: 60000 });
        await waitUntil(() => (watch.reading().length > 0 ? true : undefined), 'the parser to read a page');
        console.log(JSON.stringify(p.processes()));
        await first;
        await new Promise(() => undefined);
      });`;
    const sift = spawn(
      process.execPath,
      ['-r', path.join(ROOT, 'test', 'support', 'ts-hook.js'), '-e', script],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    sift.stdout.on('data', (b: Buffer) => (out += b.toString()));
    sift.stderr.on('data', (b: Buffer) => (err += b.toString()));
    let pids: number[] = [];
    try {
      pids = await waitUntil(
        () => (out.includes('\n') ? (JSON.parse(out) as number[]) : undefined),
        () => `the parser to start: ${err.slice(-2000)}`,
        30_000,
      );
      expect(pids).toHaveLength(1);
      expect(processRuns(pids[0])).toBe(true);
    } finally {
      sift.kill('SIGKILL');
    }
    try {
      await waitUntil(() => (pids.some(processRuns) ? undefined : true), 'the parser process to go', 5000);
    } finally {
      for (const pid of pids.filter(processRuns)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);
});
