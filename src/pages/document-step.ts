import { parsePageRanges, type DocumentParser, type OcrMode } from '../documents';
import { NO_METADATA, type Metadata } from '../extract/metadata';
import type { Verdict } from '../extract/verdict';

/** The answer's hint for a document with no text at all. */
export const NO_TEXT_LAYER = 'no text layer, and no image large enough for OCR';
/** The same for an Office file: it has no pages of images to read. */
const NO_TEXT = 'the document holds no text';
/** The parse ends this long before the request's time is up, so that it is said what ran out. */
const DEADLINE_MARGIN_MS = 250;

/** A document read: its text in every format, its metadata and verdict. */
export interface ReadDocument {
  title: string;
  html: string;
  markdown: string;
  text: string;
  metadata: Metadata;
  verdict: Verdict;
  /** Why the verdict is what it is, when sift can say. */
  hint?: string;
  /** Pages were left out (the `pages` option, SIFT_PDF_MAX_PAGES, or the character cap). */
  truncated: boolean;
}

export interface DocumentAsk {
  /** The `pages` option, as sent ("1-5,9"). */
  pages?: string;
  /** The `ocr` option (auto when absent). */
  ocr?: OcrMode;
  /** The media type it was served as. */
  mediaType?: string;
  /** When the request's time is up (epoch ms): the parse ends by then. */
  deadline: number;
  signal: AbortSignal;
  /** Whose document it is (`class:name`), for the fair share of the parsers. */
  caller?: string;
}

/**
 * A PDF's bytes into a page's parts, in the parser's limited processes (see DocumentParser): the
 * title from the document's metadata, else its first heading.
 */
export class DocumentStep {
  constructor(
    private readonly parser: DocumentParser,
    private readonly limits: { maxPages: number; maxMb: number },
  ) {}

  async read(body: Buffer, ask: DocumentAsk): Promise<ReadDocument> {
    const d = await this.parser.parse(body, {
      pages: ask.pages,
      ocr: ask.ocr,
      mediaType: ask.mediaType,
      maxPages: this.limits.maxPages,
      maxMb: this.limits.maxMb,
      deadlineMs: Math.max(1, ask.deadline - Date.now() - DEADLINE_MARGIN_MS),
      signal: ask.signal,
      caller: ask.caller,
    });
    const m = d.metadata;
    // The first heading, as written (markdown's escapes undone).
    // (A workbook's headings are its sheets' names, not a title.)
    const heading = (d.family === 'xlsx' ? undefined : /^#{1,3} (.+)$/m.exec(d.markdown))?.[1]?.replace(
      /\\([\\`*_{}[\]()#+\-.!<>|~])/g,
      '$1',
    );
    // Pages asked for that the document does not have: nothing read is not a missing text layer.
    const beyond = ask.pages !== undefined && parsePageRanges(ask.pages).every((r) => r.first > m.pages);
    const hint = beyond
      ? `the document has ${m.pages} page(s); none of pages "${ask.pages}" is among them`
      : d.family === 'image'
        ? ask.ocr === 'never'
          ? 'an image: its text is read by OCR, which ocr "never" turns off'
          : 'OCR found no text in the image'
        : d.family
          ? NO_TEXT
          : ask.ocr === 'never'
            ? 'no text layer (ocr "never" leaves scans unread)'
            : d.ocrFailure
              ? `no text layer, and OCR could not read its images: ${d.ocrFailure}`
              : m.ocr
                ? 'no text layer, and OCR found no text in its images'
                : NO_TEXT_LAYER;
    return {
      title: m.title ?? heading?.trim() ?? '',
      html: d.html,
      markdown: d.markdown,
      text: d.text,
      metadata: {
        ...NO_METADATA,
        author: m.author ?? null,
        published_at: m.published_at ?? null,
        language: m.language ?? null,
        description: m.description ?? null,
        pages: m.pages,
        ...(m.ocr ? { ocr: true } : {}),
      },
      verdict: d.hasText ? 'ok' : 'empty',
      ...(d.hasText ? {} : { hint }),
      truncated: d.truncated,
    };
  }
}
