import type { PageRange } from '../page-ranges';
import { isNamed } from '../page-select';
import type { PageBlocks } from '../blocks';
import { Gathered } from './gathered';
import type { OfficeRead } from './office-reader';
import { cellShapes, counts1904, shownNumber } from './xlsx-dates';
import { propertiesOf } from './properties';
import { Enough, readXml } from './xml';
import type { Zip } from './zip';

/** Rows read of a workbook, all sheets together; past them the rest is cut (truncated). */
export const MAX_ROWS = 10_000;
/** Columns read of a row. */
export const MAX_COLUMNS = 256;

/** The workbook's sheets in order: name and part. */
function sheetsOf(zip: Zip): { name: string; part: string }[] {
  const targets = new Map<string, string>();
  const rels = zip.read('xl/_rels/workbook.xml.rels');
  if (rels) {
    readXml(rels, 'xl/_rels/workbook.xml.rels', {
      open: (n, a) => {
        if (n === 'Relationship' && a.Id && a.Target) targets.set(a.Id, a.Target);
      },
    });
  }
  const sheets: { name: string; part: string }[] = [];
  readXml(zip.read('xl/workbook.xml')!, 'xl/workbook.xml', {
    open: (n, a) => {
      if (n !== 'sheet') return;
      const target = targets.get(a['r:id'] ?? '');
      if (!target) return;
      const part = target.startsWith('/') ? target.slice(1) : `xl/${target.replace(/^\.\//, '')}`;
      sheets.push({ name: a.name ?? `Sheet ${sheets.length + 1}`, part });
    },
  });
  return sheets;
}

/** One line of text: runs of white space as one space, none at the ends. */
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * The shared strings table: each string item's text, runs joined, phonetic guides left out, on
 * one line and at most `maxChars` long.
 */
function sharedStrings(zip: Zip, maxChars: number): string[] {
  const out: string[] = [];
  const bytes = zip.read('xl/sharedStrings.xml');
  if (!bytes) return out;
  let cur: string | undefined;
  let inText = false;
  let phonetic = 0;
  readXml(bytes, 'xl/sharedStrings.xml', {
    open: (n) => {
      if (n === 'si') cur = '';
      else if (n === 't') inText = true;
      else if (n === 'rPh') phonetic++;
    },
    text: (t) => {
      if (inText && phonetic === 0 && cur !== undefined && cur.length < maxChars) cur += t;
    },
    close: (n) => {
      if (n === 'si') {
        out.push(oneLine(cur ?? '').slice(0, maxChars));
        cur = undefined;
      } else if (n === 't') inText = false;
      else if (n === 'rPh') phonetic--;
    },
  });
  return out;
}

/** A cell reference's column, from 0 ("C7" → 2); undefined when it has none. */
function columnOf(ref: string | undefined): number | undefined {
  const m = /^([A-Z]{1,3})\d/.exec(ref ?? '');
  if (!m) return undefined;
  let n = 0;
  for (const c of m[1]) n = n * 26 + (c.charCodeAt(0) - 64);
  return n - 1;
}

/**
 * A workbook (xlsx): each sheet a table under its name, marked `<!-- sheet N -->`, rows and
 * columns without a value left out at the end, values as stored (shared and inline strings,
 * numbers, TRUE/FALSE; formulas by their last computed value), a number whose format is a date
 * or a time as ISO 8601 (see shownNumber). At most MAX_ROWS rows in all.
 */
export function readXlsx(zip: Zip, maxChars: number, ranges?: PageRange[]): OfficeRead {
  if (!zip.has('xl/workbook.xml')) throw new Error('xl/workbook.xml is missing');
  const sheets = sheetsOf(zip);
  const strings = sharedStrings(zip, maxChars);
  const shapes = cellShapes(zip);
  const from1904 = counts1904(zip);
  const out = new Gathered(maxChars);
  const pages: PageBlocks[] = [];
  let rowsLeft = MAX_ROWS;
  let cut = false;
  let skipped = false;
  let chars = 0;
  for (const [i, sheet] of sheets.entries()) {
    if (cut || rowsLeft <= 0 || out.truncated) {
      cut = true;
      break;
    }
    if (!isNamed(ranges, i + 1)) {
      skipped = true;
      continue;
    }
    const bytes = zip.read(sheet.part);
    if (!bytes) continue;
    const rows: string[][] = [];
    let row: string[] | undefined;
    let cell: { col: number; type?: string; style?: string; value: string } | undefined;
    let inValue = false;
    readXml(bytes, sheet.part, {
      open: (n, a) => {
        if (n === 'row') row = [];
        else if (n === 'c' && row) {
          cell = { col: columnOf(a.r) ?? row.length, type: a.t, style: a.s, value: '' };
        } else if ((n === 'v' || n === 't') && cell) inValue = true;
      },
      text: (t) => {
        if (inValue && cell && cell.value.length < maxChars) cell.value += t;
      },
      close: (n) => {
        if (n === 'v' || n === 't') inValue = false;
        else if (n === 'c' && cell && row) {
          const v = cell.value;
          const value =
            cell.type === 's'
              ? (strings[Number(v)] ?? '')
              : cell.type === 'b'
                ? v === '1'
                  ? 'TRUE'
                  : 'FALSE'
                : cell.type === undefined || cell.type === 'n'
                  ? shownNumber(v.trim(), shapes[Number(cell.style ?? 0)] ?? 'number', from1904)
                  : oneLine(v);
          if (cell.col < MAX_COLUMNS) row[cell.col] = value;
          else if (value !== '') cut = true;
          // The characters read so far, the sheet's and those before: past the cap, the rest is cut.
          chars += value.length;
          if (chars > maxChars) {
            cut = true;
            throw new Enough();
          }
          cell = undefined;
        } else if (n === 'row' && row) {
          const cells = Array.from(row, (c) => c ?? '');
          while (cells.length > 0 && cells.at(-1) === '') cells.pop();
          row = undefined;
          if (cells.length === 0) return;
          // A row with values past the cap: the rest of the workbook is cut.
          if (rows.length >= rowsLeft) {
            cut = true;
            throw new Enough();
          }
          rows.push(cells);
        }
      },
    });
    rowsLeft -= rows.length;
    out.add({ kind: 'heading', size: 0, level: 1, text: sheet.name });
    if (rows.length > 0) out.add({ kind: 'table', rows });
    pages.push({ page: i + 1, blocks: out.take() });
  }
  return {
    pages,
    marker: 'sheet',
    truncated: cut || skipped || out.truncated,
    metadata: propertiesOf(zip, sheets.length),
  };
}
