import type { PageBlocks } from '../blocks';
import type { DocumentMetadata } from '../doc-metadata';
import { withFormats, writeFormats } from '../formats';
import type { ParsedDocument } from '../pdf-reader';
import type { PageRange } from '../page-ranges';
import { ReadFailure } from '../read-failure';
import { readCsv } from './csv';
import { readRtf } from './rtf';
import { readDocx } from './docx';
import { readEpub } from './epub';
import { readOdf } from './odf';
import { readPptx } from './pptx';
import { readXlsx } from './xlsx';
import { Zip } from './zip';

/** What a family's reader gathers: the pages (one flow, sheets or slides) and the metadata. */
export interface OfficeRead {
  pages: PageBlocks[];
  marker: 'slide' | 'sheet' | null;
  truncated: boolean;
  metadata: DocumentMetadata;
}

/** What one document may unpack to: each part, and all parts read together. */
const PART_BYTES = 64 * 1024 * 1024;
const TOTAL_BYTES = 256 * 1024 * 1024;

type Family = Exclude<NonNullable<ParsedDocument['family']>, 'csv' | 'rtf' | 'image'>;
/** A family's reader: `ranges` (the `pages` option) chooses slides, sheets or chapters; a flow is read whole. */
type Reader = (zip: Zip, maxChars: number, ranges?: PageRange[]) => OfficeRead;

/** OpenDocument files and e-books name their kind in a first, stored part, `mimetype`. */
const ODF: Record<string, [Family, Reader]> = {
  'application/vnd.oasis.opendocument.text': ['odt', (z, m) => readOdf(z, m, 'text')],
  'application/vnd.oasis.opendocument.spreadsheet': ['ods', (z, m, r) => readOdf(z, m, 'spreadsheet', r)],
  'application/vnd.oasis.opendocument.presentation': ['odp', (z, m, r) => readOdf(z, m, 'presentation', r)],
  'application/epub+zip': ['epub', readEpub],
};

/** The family of the archive, by its main part (Office Open XML) or its mimetype (OpenDocument). */
function familyOf(zip: Zip): [Family, Reader] | undefined {
  if (zip.has('word/document.xml')) return ['docx', readDocx];
  if (zip.has('xl/workbook.xml')) return ['xlsx', readXlsx];
  if (zip.has('ppt/presentation.xml')) return ['pptx', readPptx];
  const mimetype = zip.has('mimetype') ? zip.read('mimetype')?.toString('latin1').trim() : undefined;
  return mimetype ? ODF[mimetype] : undefined;
}

/** Whether bytes are an archive this reader may know (a zip): the parser decides by its parts. */
export const mayBeOffice = (bytes: Uint8Array): boolean => Zip.starts(bytes);

/**
 * An Office Open XML file (Word, Excel, PowerPoint), known by the main part its archive holds, or
 * an OpenDocument file (text, spreadsheet, presentation), known by its mimetype part,
 * read into the same blocks as a PDF and written in the same three formats. Every part is
 * bounded before and while it is inflated (see Zip) and read as strict XML without a DTD (see
 * readXml).
 */
export function readOffice(bytes: Uint8Array, maxChars: number, ranges?: PageRange[]): ParsedDocument {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const zip = new Zip(buf, { partBytes: PART_BYTES, totalBytes: TOTAL_BYTES });
  const family = familyOf(zip);
  if (!family) {
    throw new ReadFailure(
      'unreadable',
      'a zip archive that is not a Word, Excel, PowerPoint, OpenDocument or EPUB file (no word/document.xml, xl/workbook.xml, ppt/presentation.xml, or mimetype naming one)',
    );
  }
  let read: OfficeRead;
  try {
    read = family[1](zip, maxChars, ranges);
  } catch (err) {
    if (err instanceof ReadFailure) throw err;
    if (err instanceof RangeError) throw new ReadFailure('memory', String(err.message).slice(0, 300));
    throw new ReadFailure('unreadable', String((err as Error).message ?? err).slice(0, 300));
  }
  return written(read, family[0]);
}

/** A CSV file (see readCsv), written as the other families are. */
export async function readCsvFile(bytes: Uint8Array, maxChars: number): Promise<ParsedDocument> {
  try {
    return written(await readCsv(bytes, maxChars), 'csv');
  } catch (err) {
    if (err instanceof RangeError) throw new ReadFailure('memory', String(err.message).slice(0, 300));
    throw new ReadFailure(
      'unreadable',
      `the CSV cannot be read: ${String((err as Error).message).slice(0, 300)}`,
    );
  }
}

/** Whether bytes begin as an RTF file does. */
export const startsAsRtf = (b: Uint8Array): boolean =>
  Buffer.from(b.buffer, b.byteOffset, Math.min(5, b.byteLength)).toString('latin1') === '{\\rtf';

/** An RTF file (see readRtf), written as the other families are. */
export function readRtfFile(bytes: Uint8Array, maxChars: number): ParsedDocument {
  try {
    return written(readRtf(bytes, maxChars), 'rtf');
  } catch (err) {
    if (err instanceof RangeError) throw new ReadFailure('memory', String(err.message).slice(0, 300));
    throw new ReadFailure(
      'unreadable',
      `the RTF cannot be read: ${String((err as Error).message).slice(0, 300)}`,
    );
  }
}

function written(read: OfficeRead, family: NonNullable<ParsedDocument['family']>): ParsedDocument {
  return withFormats(writeFormats(read.pages, read.marker), {
    metadata: read.metadata,
    truncated: read.truncated,
    hasText: read.pages.some((p) => p.blocks.length > 0),
    family,
  });
}
