/**
 * bench/office: documents beyond PDF. For each family, a document of some size read by sift's
 * DocumentParser (a warm parser process under its limits: the reader, three formats, the way
 * there and back) against the same reader called directly and, where a Node user would pick a
 * library for the family instead, that library (mammoth for Word files, exceljs for workbooks,
 * officeparser for decks and OpenDocument files), each in a process of its own (office-direct.ts):
 * alternating rounds, medians, units per second (pages of the stated count, sheets, slides, rows,
 * chapters), CPU per unit and peak RSS. Then OCR: seconds per page for a page of text as a
 * screenshot of sift's Chromium takes it (1280 × 1810 pixels, A4's proportions).
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import ExcelJS from 'exceljs';
import { request } from 'undici';
import { DocumentParser, defaultParserProcesses } from '../src/documents';
import { ocr, pgm } from '../src/documents/ocr';
import { grey, type DecodedImage } from '../src/documents/ocr-page';
import { PDFDocument } from 'pdf-lib';
import { Fixture, html, send } from '../test/support/fixture';
import { ROOT, kill, startSiftProcess } from '../test/support/process';
import { bigSheet, epubFile, odtFile } from '../test/support/office-files';
import { loadPdfJs, median, round, type Round } from './documents';
import type { Way } from './office-direct';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const OPTS = { maxPages: 500, maxMb: 256, deadlineMs: 120_000 };
const TOKEN = 'bench-office-token';
const PARAGRAPHS = Array.from(
  { length: 2000 },
  (_, i) => `Paragraph ${i}: ${'words of a long text '.repeat(6)}`,
);

/** A Word file of `sections` sections, each a heading, five paragraphs and a table. */
async function wordOf(sections: number): Promise<Buffer> {
  const children = [];
  for (let s = 1; s <= sections; s++) {
    children.push(new Paragraph({ text: `Section ${s}`, heading: HeadingLevel.HEADING_2 }));
    for (let p = 0; p < 5; p++)
      children.push(
        new Paragraph(`Paragraph ${p} of section ${s}: ${'words of a report written at length '.repeat(8)}`),
      );
    children.push(
      new Table({
        rows: [0, 1, 2].map(
          (r) =>
            new TableRow({
              children: [0, 1, 2].map((c) => new TableCell({ children: [new Paragraph(`r${r}c${c}`)] })),
            }),
        ),
      }),
    );
  }
  return Packer.toBuffer(new Document({ sections: [{ children }] }));
}

/** A workbook of `sheets` sheets of `rows` rows of five cells. */
async function workbookOf(sheets: number, rows: number): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  for (let s = 1; s <= sheets; s++) {
    const ws = wb.addWorksheet(`Sheet ${s}`);
    ws.addRow(['id', 'name', 'amount', 'city', 'note']);
    for (let i = 1; i <= rows; i++) ws.addRow([i, `item ${i}`, i * 3, 'Lyon', `note ${i % 17}`]);
  }
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** A deck of `n` slides (made by pptxgenjs in a node of its own, as the tests do). */
function deckOf(n: number): Buffer {
  const script = `const P = require('pptxgenjs'); const p = new P();
    for (let i = 1; i <= ${n}; i++) { const s = p.addSlide(); s.addText('Slide ' + i, { x: 0.5, y: 0.3, w: 9, h: 1 });
      s.addText([{ text: 'First point ' + i, options: { bullet: true, breakLine: true } }, { text: 'Second point', options: { bullet: true } }], { x: 0.5, y: 1.5, w: 9, h: 3 });
      s.addNotes('Notes for slide ' + i); }
    p.write({ outputType: 'base64' }).then((b) => process.stdout.write(b));`;
  return Buffer.from(
    execFileSync(process.execPath, ['-e', script], { cwd: ROOT, maxBuffer: 1 << 26 }).toString(),
    'base64',
  );
}

interface Family {
  name: string;
  unit: string;
  units: number;
  bytes: Buffer;
  /** Other ways to read it, called directly (office-direct.ts): the reader itself, a library a user would pick. */
  direct: Way[];
}

async function families(): Promise<Family[]> {
  const csv = ['id,name,amount', ...Array.from({ length: 10_000 }, (_, i) => `${i},item ${i},${i * 3}`)].join(
    '\n',
  );
  return [
    {
      name: 'docx (40 sections)',
      unit: 'sections',
      units: 40,
      bytes: await wordOf(40),
      direct: ['reader direct', 'mammoth.convertToHtml'],
    },
    {
      name: 'xlsx (4 sheets of 2,000 rows)',
      unit: 'sheets',
      units: 4,
      bytes: await workbookOf(4, 2000),
      direct: ['reader direct', 'exceljs xlsx.load'],
    },
    {
      name: 'pptx (40 slides)',
      unit: 'slides',
      units: 40,
      bytes: deckOf(40),
      direct: ['reader direct', 'officeparser (text only)'],
    },
    {
      name: 'ods-like xlsx (10,000 rows)',
      unit: 'rows',
      units: 10_000,
      bytes: bigSheet(10_000),
      direct: ['reader direct'],
    },
    {
      name: 'odt (2,000 more paragraphs)',
      unit: 'paragraphs',
      units: 2000,
      bytes: odtFile(PARAGRAPHS.map((t) => `<text:p>${t}</text:p>`).join('')),
      direct: ['reader direct', 'officeparser (text only)'],
    },
    {
      // Where the way to a parser process and back weighs most.
      name: 'odt (one paragraph)',
      unit: 'documents',
      units: 1,
      bytes: odtFile('<text:p>One short paragraph.</text:p>'),
      direct: ['reader direct'],
    },
    {
      name: 'epub (2,000 more paragraphs)',
      unit: 'paragraphs',
      units: 2000,
      bytes: epubFile(PARAGRAPHS.map((t) => `<p>${t}</p>`).join('')),
      direct: ['reader direct'],
    },
    {
      // No RTF reader stands out for Node: against sift's own, called directly.
      name: 'rtf (2,000 paragraphs)',
      unit: 'paragraphs',
      units: 2000,
      bytes: Buffer.from(
        `{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Times;}}{\\info{\\title A long report}}\n` +
          PARAGRAPHS.map(
            (t, i) =>
              (i % 50 === 0 ? `\\pard\\outlinelevel0 Part ${i / 50}\\par\n` : '') + `\\pard ${t}\\par\n`,
          ).join('') +
          '}',
        'latin1',
      ),
      direct: ['reader direct (rtf)'],
    },
    {
      name: 'csv (10,000 rows)',
      unit: 'rows',
      units: 10_000,
      bytes: Buffer.from(csv),
      direct: ['reader direct (csv)'],
    },
  ];
}

/** The PNG's pixels (decoded by pdf.js from a PDF holding it), grey, tiled over 2480 × 3508: a PGM. */
async function a4Of(png: Buffer): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const image = await doc.embedPng(png);
  doc.addPage([image.width, image.height]).drawImage(image, { x: 0, y: 0 });
  const pdfjs = await loadPdfJs();
  const pdf = await pdfjs.getDocument({ data: new Uint8Array(await doc.save()), verbosity: 0 }).promise;
  const page = await pdf.getPage(1);
  const ops = await page.getOperatorList();
  const at = ops.fnArray.indexOf(pdfjs.OPS.paintImageXObject);
  const name = String((ops.argsArray[at] as unknown[])[0]);
  const img = await new Promise<DecodedImage>((resolve) =>
    page.objs.get(name, (v: unknown) => resolve(v as DecodedImage)),
  );
  const g = grey(img)!;
  const [W, H] = [2480, 3508];
  const out = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) out[y * W + x] = g[(y % img.height) * img.width + (x % img.width)];
  await pdf.destroy();
  return pgm(W, H, out);
}

/** OCR seconds per page: a page of text, screenshot by sift's Chromium, read by Tesseract. */
async function ocrPage(): Promise<Record<string, number | string>> {
  const text = Array.from(
    { length: 28 },
    (_, i) => `<p>Line ${i + 1} of the scanned report on orchards, harvests and prices.</p>`,
  );
  const fx = await new Fixture({
    '/page': send(
      200,
      'text/html',
      html(
        `<div style="width: 1180px; height: 1760px; padding: 50px; font: 32px/1.6 'DejaVu Serif', serif; background: #fff; color: #000">${text.join('')}</div>`,
      ),
    ),
  }).start();
  const sift = await startSiftProcess({
    SIFT_TOKENS: `${TOKEN}:bench:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_DB: path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-')), 'sift.db'),
  });
  try {
    const r = await request(`${sift.url}/v1/fetch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: fx.url('/page'),
        render: 'always',
        screenshot: true,
        full_page: true,
        format: 'text',
      }),
    });
    const shot = ((await r.body.json()) as { screenshot: { data: string; width: number; height: number } })
      .screenshot;
    const png = Buffer.from(shot.data, 'base64');
    const timed = async (image: Buffer) => {
      const seconds: number[] = [];
      let words = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const t = performance.now();
        const pages = await ocr(image, { langs: 'eng', cpuS: 300 });
        seconds.push((performance.now() - t) / 1000);
        words = pages.flat().reduce((n, b) => n + (b.kind === 'paragraph' ? b.text.split(' ').length : 0), 0);
      }
      return { s: median(seconds), words };
    };
    const shotRun = await timed(png);
    // An A4 page at 300 dpi (2480 × 3508): the screenshot's text tiled over it, as a scan's page is.
    const a4 = await a4Of(png);
    const a4Run = await timed(a4);
    return {
      'OCR: page pixels': `${shot.width} × ${shot.height}`,
      [`OCR: seconds per page (median of ${ROUNDS})`]: +shotRun.s.toFixed(2),
      'OCR: seconds per megapixel': +(shotRun.s / ((shot.width * shot.height) / 1e6)).toFixed(2),
      'OCR: words read (of 336 written)': shotRun.words,
      'OCR: an A4 page at 300 dpi (2480 × 3508), seconds': +a4Run.s.toFixed(2),
      'OCR: an A4 page at 300 dpi, words read': a4Run.words,
    };
  } finally {
    await kill(sift, 'SIGTERM');
    await fx.stop();
  }
}

/** Asks the direct process to read the document `times` times one way (sending its bytes first, if given). */
function direct(runner: ChildProcess, way: Way, times: number, bytes?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    runner.once('message', (m: { done?: true; error?: string }) =>
      m.done ? resolve() : reject(new Error(`${way}: ${m.error}`)),
    );
    runner.send({ way, times, bytes });
  });
}

export async function benchOffice(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  // One document at a time in one process; and as sift runs by default: its parser processes
  // (one per spare core, two at least) with as many documents in flight.
  const serial = new DocumentParser({ processes: 1 });
  const pool = new DocumentParser();
  const inFlight = defaultParserProcesses();
  // The other ways, in a process of their own (office-direct.ts): its CPU and RSS alone.
  const runner = fork(path.join(__dirname, 'office-direct.js'), [], { serialization: 'advanced' });
  const fmt = (rs: Round[], units: number) =>
    `${median(rs.map((x) => x.pagesPerS)).toFixed(1)}, ${(median(rs.map((x) => x.cpuMsPerPage)) * units).toFixed(2)}, ${Math.round(Math.max(...rs.map((x) => x.peakRssMb)))}`;
  try {
    for (const f of await families()) {
      const opts = { ...OPTS, mediaType: f.name.startsWith('csv') ? 'text/csv' : undefined };
      await serial.parse(f.bytes, opts);
      await pool.parse(f.bytes, opts);
      await direct(runner, f.direct[0], 1, f.bytes);
      for (const way of f.direct) await direct(runner, way, 2);
      // Documents a round reads each way: enough for about half a second read directly.
      const t = performance.now();
      await direct(runner, f.direct[0], 2);
      const k = Math.max(1, Math.ceil(250 / Math.max(1, (performance.now() - t) / 2) / 2));
      const times = async (read: () => Promise<unknown>) => {
        for (let i = 0; i < k; i++) await read();
      };
      const one = () => times(() => serial.parse(f.bytes, opts));
      const many = () =>
        times(() => Promise.all(Array.from({ length: inFlight }, () => pool.parse(f.bytes, opts))));
      const s: Round[] = [];
      const m: Round[] = [];
      const d: Round[][] = f.direct.map(() => []);
      for (let r = 0; r < ROUNDS; r++) {
        s.push(await round(one, () => serial.processes(), f.units * k));
        m.push(await round(many, () => pool.processes(), f.units * k * inFlight));
        for (const [i, way] of f.direct.entries())
          d[i].push(
            await round(
              () => direct(runner, way, k),
              () => [runner.pid!],
              f.units * k,
              false,
            ),
          );
      }
      out[`${f.name}: sift, one at a time: ${f.unit}/s, CPU ms/document, peak RSS MB`] = fmt(s, f.units);
      out[`${f.name}: sift, ${inFlight} processes: ${f.unit}/s, CPU ms/document, peak RSS MB`] = fmt(
        m,
        f.units,
      );
      const sp = median(s.map((x) => x.pagesPerS));
      const mp = median(m.map((x) => x.pagesPerS));
      for (const [i, name] of f.direct.entries()) {
        const dp = median(d[i].map((x) => x.pagesPerS));
        out[
          `${f.name}: ${name}: ${f.unit}/s, CPU ms/document, peak RSS MB; sift one/it, sift ${inFlight}/it`
        ] = `${fmt(d[i], f.units)}; ${(sp / dp).toFixed(2)}, ${(mp / dp).toFixed(2)}`;
      }
    }
  } finally {
    runner.kill('SIGKILL');
    await serial.close();
    await pool.close();
  }
  return { ...out, ...(await ocrPage()) };
}
