/** Turns fetched bytes into text: charset from a BOM, the header or <meta>, UTF-8 otherwise. */
import { decodeAs, encodingName } from './charsets';

const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)/i;

export function mediaType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

function headerCharset(contentType: string): string | undefined {
  const m = /charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType);
  return m?.[1];
}

/** The encoding a label names, or undefined for none (an unknown label: the next source is asked). */
function named(label: string | undefined, fromMeta = false): string | undefined {
  const name = label ? encodingName(label) : undefined;
  // The HTML prescan: a <meta> cannot make a page UTF-16 (it would not have been read), and
  // x-user-defined there means windows-1252.
  if (fromMeta && name?.startsWith('utf-16')) return 'utf-8';
  if (fromMeta && name === 'x-user-defined') return 'windows-1252';
  return name;
}

/** Text from bytes, in the WHATWG Encoding Standard's charsets (see charsets.ts). */
export function decodeBody(body: Buffer, contentType: string, isHtml: boolean): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return decodeAs('utf-8', body);
  if (body[0] === 0xfe && body[1] === 0xff) return decodeAs('utf-16be', body);
  if (body[0] === 0xff && body[1] === 0xfe) return decodeAs('utf-16le', body);
  let name = named(headerCharset(contentType));
  if (!name && isHtml) {
    const head = body.subarray(0, 4096).toString('latin1');
    name = named(META_CHARSET.exec(head)?.[1], true);
  }
  return decodeAs(name ?? 'utf-8', body);
}

/**
 * `office`: a Word, Excel, PowerPoint or OpenDocument file (a zip archive the document parser
 * reads); `image`: a PNG, JPEG, WebP or TIFF, read by OCR.
 */
export type PageKind = 'html' | 'text' | 'json' | 'pdf' | 'office' | 'image';

/** Media types a PDF is served as. */
const PDF_TYPES = new Set(['application/pdf', 'application/x-pdf']);
/** Media types Office Open XML and OpenDocument files are served as. */
const OFFICE_TYPES = new Set([
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/epub+zip',
  'application/rtf',
  'text/rtf',
]);
/** Media types of the images read by OCR. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/webp', 'image/tiff']);
/** Media types that say nothing of the content: a PDF may hide behind them. */
const OPAQUE_TYPES = new Set([
  '',
  'application/octet-stream',
  'binary/octet-stream',
  'application/force-download',
]);

/** Whether bytes begin as a zip archive (an Office file) does. */
const startsAsZip = (body: Buffer): boolean =>
  body.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1'));

/** Whether bytes begin as a PNG, JPEG, WebP or TIFF does. */
const startsAsImage = (b: Buffer): boolean =>
  b.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47])) ||
  (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) ||
  (b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') ||
  ['II*\0', 'MM\0*'].includes(b.toString('latin1', 0, 4));

/** Whether bytes begin as a PDF does. */
export const startsAsPdf = (body: Buffer): boolean => body.subarray(0, 5).toString('latin1') === '%PDF-';

/**
 * The download cap for an answer of this type: a PDF's for a PDF; for a type that says nothing,
 * the larger of the two until its first bytes tell (see answer.ts); else the page cap.
 */
export function capFor(contentType: string, caps: { page: number; document: number }): number {
  const t = mediaType(contentType);
  if (PDF_TYPES.has(t) || OFFICE_TYPES.has(t) || IMAGE_TYPES.has(t)) return caps.document;
  return OPAQUE_TYPES.has(t) ? Math.max(caps.page, caps.document) : caps.page;
}

/** Whether an answer of this type is a PDF only if its first bytes say so. */
export const mayBePdf = (contentType: string): boolean => OPAQUE_TYPES.has(mediaType(contentType));

/** What sift does with a media type; undefined when it does not handle it. */
export function pageKind(contentType: string, body: Buffer): PageKind | undefined {
  const t = mediaType(contentType);
  // A PDF is one by its bytes whatever the server calls it.
  if (PDF_TYPES.has(t) || startsAsPdf(body)) return 'pdf';
  // An archive is an Office file by its type, or by its bytes behind a type that says nothing.
  const rtf = body.subarray(0, 5).toString('latin1') === '{\\rtf';
  if (OFFICE_TYPES.has(t) || (OPAQUE_TYPES.has(t) && (startsAsZip(body) || rtf))) return 'office';
  if (IMAGE_TYPES.has(t) || (OPAQUE_TYPES.has(t) && startsAsImage(body))) return 'image';
  if (t === 'text/html' || t === 'application/xhtml+xml') return 'html';
  if (t === 'application/json' || t.endsWith('+json')) return 'json';
  // A CSV is a table: read by the document parser, with the workbooks.
  if (t === 'text/csv') return 'office';
  if (t === 'text/plain' || t === 'text/markdown' || t === 'text/x-markdown') return 'text';
  if (t === '') {
    const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
    if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
    if (!body.subarray(0, 4096).includes(0)) return 'text';
  }
  return undefined;
}
