/**
 * bench/office's other ways to read a document, called directly in a process of their own. In
 * the bench's process, beside sift's parent (whose heap holds the formats it decodes), the same
 * reader took up to half as long again. Message `{way, times, bytes?}`: reads the last bytes sent
 * `times` times that way, then answers `{done}` (or `{error}`).
 */
import ExcelJS from 'exceljs';
import mammoth from 'mammoth';
import { parseOfficeAsync } from 'officeparser';
import { readCsvFile, readOffice, readRtfFile } from '../src/documents/office/office-reader';

export const WAYS = {
  'reader direct': (b: Buffer) => Promise.resolve(readOffice(b, 16 << 20)),
  'reader direct (csv)': (b: Buffer) => readCsvFile(b, 16 << 20),
  'reader direct (rtf)': (b: Buffer) => Promise.resolve(readRtfFile(b, 16 << 20)),
  'mammoth.convertToHtml': (b: Buffer) => mammoth.convertToHtml({ buffer: b }),
  'exceljs xlsx.load': (b: Buffer) => new ExcelJS.Workbook().xlsx.load(b as unknown as ArrayBuffer),
  // The library a Node user picks for decks and OpenDocument files: plain text only.
  'officeparser (text only)': (b: Buffer) => parseOfficeAsync(b),
} satisfies Record<string, (b: Buffer) => Promise<unknown>>;
export type Way = keyof typeof WAYS;

if (require.main === module) {
  let bytes: Buffer = Buffer.alloc(0);
  process.on('message', (m: { way: Way; times: number; bytes?: Uint8Array }) => {
    if (m.bytes) bytes = Buffer.from(m.bytes);
    void (async () => {
      for (let i = 0; i < m.times; i++) await WAYS[m.way](bytes);
    })().then(
      () => process.send?.({ done: true }),
      (err: unknown) => process.send?.({ error: String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
