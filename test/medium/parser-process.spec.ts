import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeReservation } from '../../src/documents/code-reservation';
import { ParserProcess } from '../../src/documents/parser-process';
import { keepBuiltins } from '../../src/documents/builtins';
import { childModule, pdfjsRoot } from '../../src/documents/child-source';
import { readOffice } from '../../src/documents/office/office-reader';
import {
  openSharedFile,
  readFormats,
  readJob,
  takeSharedFile,
  writeFormats,
  writeJob,
} from '../../src/documents/shared-file';
import { ReadFailure } from '../../src/documents/read-failure';
import { deferFormats, writeFormats as formatsOf } from '../../src/documents/formats';
import { odtFile } from '../support/office-files';

/**
 * The parser's process: it keeps JavaScript's own functions (pdf.js's legacy build replaces some
 * with polyfills as it loads, on Node 20 `Array.prototype.push`, which every reader calls, and
 * the child puts them back once pdf.js has loaded, keeping what pdf.js only added); a large
 * document's formats come back by a file the two processes share, whole, and nothing is left.
 */

describe("the engine's own functions", () => {
  it('are put back where they were replaced; what was added stays', () => {
    const push = Array.prototype.push;
    const parse = JSON.parse;
    const restore = keepBuiltins();
    try {
      // A polyfill's way: a function of its own in the engine's place, and a method it adds.
      Object.defineProperty(Array.prototype, 'push', {
        value: function push(this: unknown[], ...items: unknown[]) {
          for (const item of items) this[this.length] = item;
          return this.length;
        },
        writable: true,
        configurable: true,
      });
      JSON.parse = (text: string) => parse(text) as unknown;
      Object.defineProperty(Array.prototype, 'siftAdded', { value: 1, configurable: true });
      expect(restore()).toBe(2);
      expect(Array.prototype.push).toBe(push);
      expect(JSON.parse).toBe(parse);
      expect((Array.prototype as unknown as { siftAdded: number }).siftAdded).toBe(1);
      // Nothing more to put back.
      expect(restore()).toBe(0);
    } finally {
      Object.defineProperty(Array.prototype, 'push', { value: push, writable: true, configurable: true });
      JSON.parse = parse;
      delete (Array.prototype as unknown as { siftAdded?: number }).siftAdded;
    }
  });

  it("in a parser process, after pdf.js's legacy build has loaded", async () => {
    // As the parent's boot does (parser-process.ts), then what differs from before it started.
    const script = `
      const [file, root] = process.argv.slice(1);
      const natives = { push: Array.prototype.push, parse: JSON.parse, stringify: JSON.stringify,
        toString: Function.prototype.toString };
      const changed = () => Object.keys(natives).filter((k) =>
        (k === 'push' ? Array.prototype.push : k === 'toString' ? Function.prototype.toString : JSON[k]) !== natives[k]);
      const path = require('node:path');
      const { pathToFileURL } = require('node:url');
      const child = require(file);
      child.prepare(root);
      const at = (f) => import(pathToFileURL(path.join(root, 'legacy', 'build', f)).href);
      Promise.all([at('pdf.mjs'), at('pdf.worker.mjs')]).then(([pdfjs, worker]) => {
        const byPdfjs = changed();
        child.serve(pdfjs, worker, root);
        process.send({ byPdfjs, after: changed(), withResolvers: typeof Promise.withResolvers });
      });`;
    const proc = spawn(process.execPath, ['-e', script, '--', childModule(), pdfjsRoot()], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    try {
      const report = await new Promise<{ byPdfjs: string[]; after: string[]; withResolvers: string }>(
        (resolve, reject) => {
          proc.on('message', (m: { ready?: true; after?: string[] }) => {
            if (!m.ready) resolve(m as never);
          });
          proc.on('exit', (code) => reject(new Error(`the child exited (${code})`)));
        },
      );
      // Node 20 has a polyfilled push among them; a newer node may have none replaced.
      if (process.versions.node.startsWith('20.')) expect(report.byPdfjs).toContain('push');
      expect(report.after).toEqual([]);
      expect(report.withResolvers).toBe('function');
    } finally {
      proc.kill('SIGKILL');
    }
  });
});

describe('large documents and replies, by the shared file', () => {
  const OCR = { langs: 'eng', cpuS: 10 };
  const wide = 'Ελληνικά κείμενα και 日本語のテキスト, \u{1F600} and a lone \ud800 half.';
  const big = (n: number, extra = '') =>
    odtFile(
      Array.from(
        { length: n },
        (_, i) => `<text:p>Paragraph ${i}: ${'plain words '.repeat(8)}${extra}</text:p>`,
      ).join(''),
    );

  it('formats of a large document come back whole, one byte or two a character, by a file with no name', async () => {
    const proc = new ParserProcess(childModule(), pdfjsRoot(), {
      maxMb: 256,
      codeBytes: await codeReservation(),
    });
    // How each document went (its bytes) and came back (its formats).
    const sentByFile: boolean[] = [];
    const send = proc.proc.send.bind(proc.proc) as (m: unknown, cb: (e: Error | null) => void) => boolean;
    proc.proc.send = ((m: { job: { bytes: Uint8Array }; size?: number }, cb: (e: Error | null) => void) => {
      sentByFile.push(m.size !== undefined && m.job.bytes.byteLength === 0);
      return send(m, cb);
    }) as typeof proc.proc.send;
    const byFile: boolean[] = [];
    proc.proc.on('message', (m: { ok?: unknown; parts?: unknown }) => {
      if (m.ok) byFile.push(m.parts !== undefined);
    });
    const read = async (bytes: Buffer) => {
      const end = await proc.run(
        { bytes, maxPages: 500, maxChars: 16 << 20, ocrLimits: OCR },
        () => undefined,
      );
      if (!('markdown' in end)) throw new Error(`not read: ${JSON.stringify(end)}`);
      return end;
    };
    try {
      await proc.ready;
      proc.hold(true);
      // The third's 2,000 paragraphs of random digits make a file of over 64 KB.
      const random = odtFile(
        Array.from({ length: 2000 }, () => `<text:p>${crypto.randomBytes(40).toString('hex')}</text:p>`).join(
          '',
        ),
      );
      expect(random.length).toBeGreaterThan(64 * 1024);
      for (const doc of [big(2000), big(2000, wide), random]) {
        const got = await read(doc);
        const own = readOffice(doc, 16 << 20);
        expect(got.markdown.length).toBeGreaterThan(64 * 1024);
        expect([got.markdown, got.text, got.html]).toEqual([own.markdown, own.text, own.html]);
      }
      // A small one goes by the channel.
      expect((await read(odtFile('<text:p>One short paragraph.</text:p>'))).text).toContain(
        'One short paragraph.',
      );
      expect(byFile).toEqual([true, true, true, false]);
      expect(sentByFile).toEqual([false, false, true, false]);
      // The child holds the file once, closed as it starts another program; its name is gone,
      // and it is empty once read.
      const fds = fs.readdirSync(`/proc/${proc.pid}/fd`);
      const held = fds.filter((fd) =>
        /sift-shared-[0-9a-f-]+ \(deleted\)$/.test(fs.readlinkSync(`/proc/${proc.pid}/fd/${fd}`)),
      );
      expect(held).toHaveLength(1);
      expect(held).not.toContain('4');
      const flags = /^flags:\s+(\d+)$/m.exec(
        fs.readFileSync(`/proc/${proc.pid}/fdinfo/${held[0]}`, 'utf8'),
      )![1];
      expect(parseInt(flags, 8) & 0o2000000).not.toBe(0); // O_CLOEXEC
      expect(fs.statSync(`/proc/${proc.pid}/fd/${held[0]}`).size).toBe(0);
    } finally {
      proc.kill('closed');
      await proc.exit;
    }
  });

  it('each side on its own: what is written is read back; parts that do not fit the file are refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-shared-test-'));
    const fd = openSharedFile([dir])!;
    try {
      expect(fd).toBeDefined();
      expect(fs.readdirSync(dir)).toEqual([]);
      const doc = { markdown: 'm'.repeat(70_000), text: `${wide}\n`.repeat(1000), html: '<p>h</p>' };
      const parts = writeFormats(fd, doc)!;
      expect(parts.map(([enc]) => enc)).toEqual(['latin1', 'utf16le', 'latin1']);
      // More than the child's memory could hold: refused, though the file holds it.
      expect(readFormats(fd, parts, 100_000)).toBeUndefined();
      expect(readFormats(fd, parts, 1 << 30)).toEqual(doc);
      // Emptied once read: the same parts again are more than the file holds.
      expect(readFormats(fd, parts, 1 << 30)).toBeUndefined();
      expect(writeFormats(fd, { markdown: 'short', text: 'short', html: 'short' })).toBeUndefined();
      writeFormats(fd, doc);
      for (const bad of [
        undefined,
        'parts',
        [['latin1', 10]],
        [
          ['latin1', 10],
          ['utf8', 10],
          ['latin1', 10],
        ],
        [
          ['latin1', -1],
          ['latin1', 10],
          ['latin1', 10],
        ],
        [
          ['latin1', 10],
          ['utf16le', 11],
          ['latin1', 10],
        ],
        [
          ['latin1', 1.5],
          ['latin1', 10],
          ['latin1', 10],
        ],
        [
          ['latin1', 10],
          ['latin1', 10],
          ['latin1', 10 ** 9],
        ],
      ])
        expect(readFormats(fd, bad, 1 << 30)).toBeUndefined();
      // Formats not written yet are written from their pages, a few pieces at a time, and read
      // back as they are when written in this process; one byte a character while the text has
      // none beyond Latin-1.
      const paragraphs = Array.from({ length: 3000 }, (_, i) => ({
        kind: 'paragraph' as const,
        text: `Paragraph ${i}: naïve words_of *text* <b>`,
      }));
      deferFormats(); // as in a parser process
      try {
        for (const [extra, enc] of [
          ['Latin-1 only: ü', 'latin1'],
          [wide, 'utf16le'],
        ] as const) {
          const unwritten = formatsOf([
            { page: 1, blocks: paragraphs },
            { page: 2, blocks: [{ kind: 'heading', size: 1, level: 1, text: extra }] },
          ]);
          const got = writeFormats(fd, unwritten)!;
          expect(got.map(([e]) => e)).toEqual([enc, enc, enc]);
          const back = readFormats(fd, got, 1 << 30)!;
          expect(back).toEqual({ markdown: unwritten.markdown, text: unwritten.text, html: unwritten.html });
          expect(back.markdown).toContain(`<!-- page 2 -->\n\n# ${extra}`);
          expect(back.html.length).toBeGreaterThan(100_000);
        }
      } finally {
        deferFormats(false);
      }
      // A document: written, read back whole, and the file emptied.
      const bytes = crypto.randomBytes(100_000);
      expect(writeJob(fd, bytes)).toBe(true);
      expect(Buffer.from(readJob(fd, bytes.length))).toEqual(bytes);
      expect(fs.fstatSync(fd).size).toBe(0);
      // A small one, or no file: the channel. A child told of more than the file holds, of a
      // size that is not one, or of no file, fails; told of more than it can hold, for memory.
      expect(writeJob(fd, bytes.subarray(0, 1000))).toBe(false);
      expect(writeJob(undefined, bytes)).toBe(false);
      expect(writeJob(999_999, bytes)).toBe(false);
      const failure = (f: () => unknown) => {
        try {
          f();
        } catch (err) {
          return err instanceof ReadFailure ? err.kind : String(err);
        }
        return 'read';
      };
      writeJob(fd, bytes);
      expect(failure(() => readJob(fd, bytes.length + 1))).toBe('unreadable');
      expect(fs.fstatSync(fd).size).toBe(0);
      for (const size of [-1, 1.5, '10', undefined])
        expect(failure(() => readJob(fd, size))).toBe('unreadable');
      expect(failure(() => readJob(undefined, 10))).toBe('unreadable');
      expect(failure(() => readJob(fd, 2 ** 52))).toBe('memory');
      // Not a file the child can write to: the channel carries the reply.
      expect(writeFormats(999_999, doc)).toBeUndefined();
      expect(writeFormats(undefined, doc)).toBeUndefined();
      // No folder to make it in: no file, and the channel.
      expect(openSharedFile([path.join(dir, 'absent')])).toBeUndefined();
      // A child told of no file, or of a descriptor that is not one, has none.
      for (const told of [undefined, '', '4x', '-1', '999999']) expect(takeSharedFile(told)).toBeUndefined();
    } finally {
      fs.closeSync(fd);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file that takes only part of a reply or a document is emptied, and the channel carries it', async () => {
    // A process that may write files of 200 KB at most (as a full folder stops a write).
    const script = `
      const fs = require('node:fs');
      const { openSharedFile, writeFormats, writeJob } = require(process.argv[1]);
      const fd = openSharedFile([process.argv[2]]);
      const parts = writeFormats(fd, { markdown: 'm'.repeat(150000), text: 't'.repeat(150000), html: 'h' });
      const size = fs.fstatSync(fd).size;
      const job = writeJob(fd, Buffer.alloc(300000, 1));
      process.stdout.write(JSON.stringify({ parts: parts ?? null, size, job, jobSize: fs.fstatSync(fd).size }));`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-shared-test-'));
    try {
      const module = path.join(path.dirname(childModule()), 'shared-file.js');
      const out = await new Promise<string>((resolve, reject) => {
        const p = spawn('prlimit', ['--fsize=200000', '--', process.execPath, '-e', script, module, dir]);
        let text = '';
        p.stdout.on('data', (b: Buffer) => (text += b.toString()));
        p.on('error', reject);
        p.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exited ${code}: ${text}`))));
      });
      expect(JSON.parse(out)).toEqual({ parts: null, size: 0, job: false, jobSize: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
