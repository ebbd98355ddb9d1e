import * as path from 'node:path';
import { blockChars, rankHeadings, type Block, type PageBlocks, type TextRun } from './blocks';
import { metadataOf, type DocumentMetadata } from './doc-metadata';
import { withFormats, writeFormats } from './formats';
import { layOut } from './layout';
import type { PageRange } from './page-ranges';
import { selectPages } from './page-select';
import { ReadFailure } from './read-failure';
import { ocrPage } from './ocr-page';
import type { OcrLimits, OcrMode } from './ocr';

export { ReadFailure };

type PdfJs = typeof import('pdfjs-dist');

/** A document to read, as the parent sends it to the parser's process. */
export interface ReadJob {
  bytes: Uint8Array;
  ranges?: PageRange[];
  maxPages: number;
  maxChars: number;
  /** The media type it was served as: a CSV is known by it alone. */
  mediaType?: string;
  /** OCR as asked (auto when absent), in these languages, within this CPU time an image. */
  ocr?: OcrMode;
  ocrLimits: OcrLimits;
}

export interface ParsedDocument {
  markdown: string;
  text: string;
  html: string;
  metadata: DocumentMetadata;
  /** Pages were left out: by the pages option, the page cap or the character cap. */
  truncated: boolean;
  /** Some page read has text: false for a scan with no text layer. */
  hasText: boolean;
  /** Why OCR read nothing of some page's images (Tesseract missing, a language without data). */
  ocrFailure?: string;
  /** What was read: a PDF when absent; else the Office family (docx, xlsx, pptx). */
  family?: 'docx' | 'xlsx' | 'pptx' | 'odt' | 'ods' | 'odp' | 'epub' | 'csv' | 'rtf' | 'image';
}

/** Messages of a parser out of memory or stack: from its own errors, or from warnings it logs. */
const EXHAUSTED =
  /allocation failed|out of memory|Invalid (typed )?array length|Invalid string length|Maximum call stack size exceeded|Array buffer allocation/i;

/**
 * pdf.js goes on past errors it can live with (a broken font, a bad operator), as viewers do, and
 * only logs them: then a page that ran out of memory would come back short, not failed. Its log
 * is read here, and such a message fails the document (see EXHAUSTED).
 */
export class Exhaustion {
  message?: string;
  watch(line: unknown): void {
    const s = String(line);
    if (!this.message && EXHAUSTED.test(s)) this.message = s.slice(0, 300);
  }
  check(): void {
    if (this.message) throw new ReadFailure('memory', this.message);
  }
}

function classify(err: unknown): ReadFailure {
  if (err instanceof ReadFailure) return err;
  const e = err as { name?: string; message?: string };
  const message = String(e?.message ?? err).slice(0, 300);
  if (e?.name === 'PasswordException') return new ReadFailure('encrypted', message);
  if (err instanceof RangeError || EXHAUSTED.test(message)) return new ReadFailure('memory', message);
  return new ReadFailure('unreadable', message);
}

async function pageBlocks(doc: Awaited<ReturnType<PdfJs['getDocument']>['promise']>, n: number) {
  const page = await doc.getPage(n);
  try {
    const content = await page.getTextContent({ includeMarkedContent: false, disableNormalization: false });
    return layOut(content.items.filter((i): i is TextRun & typeof i => 'str' in i));
  } finally {
    page.cleanup();
  }
}

/**
 * Reads a document with pdf.js: the pages asked for, laid out (see layOut), written in the three
 * formats, with the metadata. `progress(n)` is called as page n starts (0: opening the document).
 * Nothing is fetched: fonts are not loaded as fonts, CMaps and standard font data come from the
 * package's own folders, JavaScript is never evaluated.
 */
export async function readDocument(
  pdfjs: PdfJs,
  pdfjsRoot: string,
  job: ReadJob,
  exhaustion: Exhaustion,
  progress: (page: number) => void,
): Promise<ParsedDocument> {
  progress(0);
  const task = pdfjs.getDocument({
    data: job.bytes,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    useWasm: false,
    enableXfa: false,
    disableAutoFetch: true,
    disableStream: true,
    disableRange: true,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    cMapUrl: path.join(pdfjsRoot, 'cmaps') + path.sep,
    cMapPacked: true,
    standardFontDataUrl: path.join(pdfjsRoot, 'standard_fonts') + path.sep,
    // Warnings are read by `exhaustion` (pdf.js's log goes to console.log, which the process watches).
    verbosity: 1,
  });
  try {
    const doc = await task.promise.catch((err: unknown) => {
      throw classify(err);
    });
    exhaustion.check();
    const total = doc.numPages;
    const { pages, cut } = selectPages(job.ranges, total, job.maxPages);
    const out: PageBlocks[] = [];
    let gathered = 0;
    let truncated = cut;
    let hasText = false;
    let failed = 0;
    let ocred = false;
    let ocrFailure: string | undefined;
    for (const n of pages) {
      progress(n);
      const blocks = await pageBlocks(doc, n).catch((err: unknown) => {
        // A page that cannot be read (a page the tree claims but lacks, a broken one) is left
        // out, as viewers do; running out of memory is not a broken page.
        const failure = classify(err);
        if (failure.kind === 'memory') throw failure;
        failed++;
        return [] as Block[];
      });
      exhaustion.check();
      // A page with no text layer (or every page, asked so) is read by OCR from its images.
      if ((blocks.length === 0 && job.ocr !== 'never') || job.ocr === 'always') {
        const read = await ocrPage(pdfjs, doc, n, job.ocrLimits);
        if (read.failure && read.blocks.length === 0) ocrFailure ??= read.failure;
        else if (read.images > 0) {
          blocks.splice(0, blocks.length, ...read.blocks);
          ocred = true;
        }
      }
      const kept: Block[] = [];
      for (const b of blocks) {
        if (gathered + blockChars(b) > job.maxChars) {
          truncated = true;
          break;
        }
        gathered += blockChars(b);
        kept.push(b);
      }
      if (kept.length > 0) hasText = true;
      out.push({ page: n, blocks: kept });
      if (kept.length < blocks.length) break;
    }
    if (failed > 0 && failed === pages.length) throw new ReadFailure('unreadable', 'no page could be read');
    rankHeadings(out);
    const meta = await doc.getMetadata();
    exhaustion.check();
    const metadata = metadataOf(meta.info as Record<string, unknown>, meta.metadata, total, (s) =>
      pdfjs.PDFDateString.toDateObject(s),
    );
    return withFormats(writeFormats(out), {
      metadata: ocred ? { ...metadata, ocr: true } : metadata,
      truncated,
      hasText,
      ...(ocrFailure ? { ocrFailure } : {}),
    });
  } catch (err) {
    throw classify(err);
  } finally {
    await task.destroy().catch(() => undefined);
  }
}
