import { readXml } from './xml';
import type { Zip } from './zip';

/** How a number of a cell is shown: as it is, or as a date, a date and time, or a time of day. */
export type NumberShape = 'number' | 'date' | 'datetime' | 'time';

/** Built-in number formats that are dates and times (ECMA-376 §18.8.30, and the East Asian ones). */
const BUILT_IN: Record<number, NumberShape> = {
  14: 'date',
  15: 'date',
  16: 'date',
  17: 'date',
  18: 'time',
  19: 'time',
  20: 'time',
  21: 'time',
  22: 'datetime',
  45: 'time',
  46: 'time',
  47: 'time',
};
for (const id of [27, 28, 29, 30, 31, 34, 35, 36, 50, 51, 52, 53, 54, 57, 58]) BUILT_IN[id] = 'date';
for (const id of [32, 33, 55, 56]) BUILT_IN[id] = 'time';

/**
 * What a format code shows: its first section, with quoted text, escaped characters and bracketed
 * parts (colours, conditions, locales) and padding left out, is a date when it holds a day, a
 * month or a year, a time when it holds hours or seconds (`m` beside them is minutes).
 */
export function shapeOfCode(code: string): NumberShape {
  // Elapsed time (`[h]:mm`, 26 hours) is no time of day: the number is left as it is.
  if (/\[(h+|m+|s+)\]/i.test(code)) return 'number';
  const plain = (code.split(';')[0] ?? '')
    .replace(/"[^"]*"/g, '')
    .replace(/[\\_*]./g, '')
    .replace(/\[[^\]]*\]/g, '');
  const date = /[dy]/i.test(plain) || (/m/i.test(plain) && !/[hs]/i.test(plain));
  const time = /[hs]/i.test(plain);
  return date && time ? 'datetime' : date ? 'date' : time ? 'time' : 'number';
}

/**
 * Each cell style's shape (by its index, a cell's `s`), from xl/styles.xml: the number format of
 * its `cellXfs` entry, built in or defined in `numFmts`.
 */
export function cellShapes(zip: Zip): NumberShape[] {
  const bytes = zip.read('xl/styles.xml');
  if (!bytes) return [];
  const codes = new Map<number, string>();
  const shapes: NumberShape[] = [];
  let inCellXfs = false;
  readXml(bytes, 'xl/styles.xml', {
    open: (n, a) => {
      if (n === 'numFmt' && a.numFmtId && a.formatCode !== undefined)
        codes.set(Number(a.numFmtId), a.formatCode);
      else if (n === 'cellXfs') inCellXfs = true;
      else if (n === 'xf' && inCellXfs) {
        const id = Number(a.numFmtId ?? 0);
        const code = codes.get(id);
        shapes.push(code !== undefined ? shapeOfCode(code) : (BUILT_IN[id] ?? 'number'));
      }
    },
    close: (n) => {
      if (n === 'cellXfs') inCellXfs = false;
    },
  });
  return shapes;
}

/** Whether the workbook counts its days from 1904 (`<workbookPr date1904="1"/>`). */
export function counts1904(zip: Zip): boolean {
  let yes = false;
  readXml(zip.read('xl/workbook.xml')!, 'xl/workbook.xml', {
    open: (n, a) => {
      if (n === 'workbookPr') yes = a.date1904 === '1' || a.date1904 === 'true';
    },
  });
  return yes;
}

const DAY_MS = 86_400_000;
/** Day 0 of the 1900 system as Excel counts it: 1899-12-30 for day 61 on (it takes 1900 for a leap year). */
const EPOCH_1900 = Date.UTC(1899, 11, 30);
const EPOCH_1904 = Date.UTC(1904, 0, 1);

/**
 * A stored number as its format shows it, in ISO 8601: `2024-03-15`, `2024-03-15 14:30:00`,
 * `14:30:00`. A value that is no number, or out of range, comes back as it is.
 */
export function shownNumber(value: string, shape: NumberShape, from1904: boolean): string {
  if (shape === 'number' || value === '') return value;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n >= 2_958_466) return value;
  // Days before 1900-03-01 (under 61) are a day off in Excel's count: its 29 February 1900 is day 60.
  const epoch = from1904 ? EPOCH_1904 : n < 61 ? EPOCH_1900 + DAY_MS : EPOCH_1900;
  const ms = Math.round((n * DAY_MS) / 1000) * 1000;
  const iso = new Date(epoch + ms).toISOString();
  if (shape === 'time') return iso.slice(11, 19);
  if (shape === 'date') return iso.slice(0, 10);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}
