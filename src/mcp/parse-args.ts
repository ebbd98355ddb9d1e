// The parse tool's arguments: a file sent in base64, and the options POST /v1/parse takes. Like
// tool-args.ts, this file loads no server code (`sift mcp` loads it too).
import { z } from 'zod';
import type { UploadedFile } from '../pages/upload.service';
import { asSent, pageOptions, pagingShape, strip, type Args, type Body } from './tool-args';

/** A file sent to be read: the upload service's (a type only: nothing of the server is loaded). */
export type FileSent = UploadedFile;

/** A file sent in the call: its bytes in base64, and what tells its type. */
export const parseShape = {
  data: z
    .string()
    .describe(
      "The file's bytes in base64 (a PDF, Word, Excel, PowerPoint, OpenDocument, EPUB, RTF, CSV, html or text file, or an image read by OCR).",
    ),
  filename: z
    .string()
    .max(200)
    .optional()
    .describe('Its name, such as report.docx: the extension tells its type when content_type does not.'),
  content_type: z
    .string()
    .max(200)
    .optional()
    .describe('Its media type, such as application/pdf (default: told by its name and bytes).'),
  format: pageOptions.format,
  pages: asSent(z.string())
    .optional()
    .describe(
      'Only these pages, as "1-5,9" or "7-": a PDF\'s pages, a deck\'s slides, a workbook\'s sheets, an e-book\'s chapters.',
    ),
  ocr: asSent(z.enum(['auto', 'always', 'never']))
    .optional()
    .describe('OCR: auto (images, and PDF pages with no text layer), always, never.'),
  ...pagingShape,
};

/** The options of POST /v1/parse (the file, and max_chars and offset, are the tool's own). */
export function parseBody(a: Pick<Args<typeof parseShape>, 'format' | 'pages' | 'ocr'>): Body {
  return strip({ format: a.format, pages: a.pages, ocr: a.ocr, tokens: true });
}

/** A tool's own refusal of its arguments, answered as sift's errors are (see errorResult). */
class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/**
 * The file of a parse call: its base64 decoded (either alphabet; line breaks ignored), its type
 * as sent or none, which POST /v1/parse then tells by its name and its bytes. A string decoded to
 * as many bytes as its length says holds nothing but base64 (the decoder passes over anything
 * else), so only one that does not is looked at character by character: a file of 32 MB is read
 * in one pass, not four.
 */
export function fileOf(a: { data: string; filename?: string; content_type?: string }): FileSent {
  let bytes = Buffer.from(a.data, 'base64');
  if (bytes.length !== Buffer.byteLength(a.data, 'base64') || a.data.length % 4 === 1) {
    const data = a.data.replace(/[\r\n\t ]+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data) || data.length % 4 === 1) {
      throw new Refusal('invalid_request', 'data: not base64', HINT);
    }
    bytes = Buffer.from(data, 'base64');
  }
  if (bytes.length === 0) throw new Refusal('invalid_request', 'data: the file is empty', HINT);
  return { bytes, contentType: a.content_type ?? 'application/octet-stream', name: a.filename };
}

const HINT = "send the file's bytes in base64, such as `base64 -w0 report.pdf` writes them";
