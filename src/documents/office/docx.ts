import type { Block } from '../blocks';
import { propertiesOf, statedCount } from './properties';
import { Gathered } from './gathered';
import { readXml } from './xml';
import type { Zip } from './zip';
import type { OfficeRead } from './office-reader';
import { MAX_COLUMNS, MAX_ROWS } from './xlsx';

/** A paragraph style's heading level (1-6), from its name or outline level, through its bases. */
function headingLevels(zip: Zip): Map<string, number> {
  const styles = new Map<string, { name?: string; outline?: number; basedOn?: string }>();
  const bytes = zip.read('word/styles.xml');
  if (bytes) {
    let id: string | undefined;
    readXml(bytes, 'word/styles.xml', {
      open: (n, a) => {
        if (n === 'w:style') {
          id = a['w:type'] === 'paragraph' ? a['w:styleId'] : undefined;
          if (id) styles.set(id, {});
        } else if (id && n === 'w:name') styles.get(id)!.name = a['w:val'];
        else if (id && n === 'w:basedOn') styles.get(id)!.basedOn = a['w:val'];
        else if (id && n === 'w:outlineLvl') styles.get(id)!.outline = Number(a['w:val']);
      },
      close: (n) => {
        if (n === 'w:style') id = undefined;
      },
    });
  }
  const own = (s: { name?: string; outline?: number }) => {
    const byName = /^(?:heading\s*([1-9])|(title))$/i.exec(s.name ?? '');
    if (byName) return byName[2] ? 1 : Number(byName[1]);
    return s.outline !== undefined && s.outline >= 0 && s.outline < 9 ? s.outline + 1 : undefined;
  };
  const out = new Map<string, number>();
  for (const [sid, s] of styles) {
    let level = own(s);
    let base = s.basedOn;
    for (let hops = 0; level === undefined && base && hops < 10; hops++) {
      const b = styles.get(base);
      if (!b) break;
      level = own(b);
      base = b.basedOn;
    }
    if (level !== undefined) out.set(sid, Math.min(6, level));
  }
  return out;
}

/** How each list (numId) numbers a level: whether it does (not bullets), and from what. */
interface Numbering {
  numbered(numId: string, level: number): boolean;
  start(numId: string, level: number): number;
}

/**
 * The lists of word/numbering.xml: each level's format and start (w:start), a list's own start
 * for a level (w:lvlOverride's w:startOverride) over its abstract list's.
 */
function numberingOf(zip: Zip): Numbering {
  const formats = new Map<string, string>();
  const starts = new Map<string, number>();
  const overrides = new Map<string, number>();
  const nums = new Map<string, string>();
  const bytes = zip.read('word/numbering.xml');
  if (bytes) {
    let abs: string | undefined;
    let num: string | undefined;
    let lvl = 0;
    readXml(bytes, 'word/numbering.xml', {
      open: (n, a) => {
        if (n === 'w:abstractNum') abs = a['w:abstractNumId'];
        else if (n === 'w:num') num = a['w:numId'];
        else if (n === 'w:abstractNumId' && num !== undefined) nums.set(num, a['w:val']);
        else if (n === 'w:lvl' || n === 'w:lvlOverride') lvl = Number(a['w:ilvl']);
        else if (n === 'w:numFmt' && abs !== undefined) formats.set(`${abs}/${lvl}`, a['w:val']);
        else if (n === 'w:start' && abs !== undefined) starts.set(`${abs}/${lvl}`, Number(a['w:val']));
        else if (n === 'w:startOverride' && num !== undefined)
          overrides.set(`${num}/${lvl}`, Number(a['w:val']));
      },
      close: (n) => {
        if (n === 'w:abstractNum') abs = undefined;
        if (n === 'w:num') num = undefined;
      },
    });
  }
  const whole = (v: number | undefined) => (Number.isInteger(v) && v! >= 0 && v! < 1e6 ? v : undefined);
  return {
    numbered: (numId, level) => {
      const fmt = formats.get(`${nums.get(numId)}/${level}`);
      return fmt !== undefined && fmt !== 'bullet' && fmt !== 'none';
    },
    start: (numId, level) =>
      whole(overrides.get(`${numId}/${level}`)) ?? whole(starts.get(`${nums.get(numId)}/${level}`)) ?? 1,
  };
}

interface Para {
  style?: string;
  outline?: number;
  numId?: string;
  level: number;
  text: string;
}

interface Cell {
  parts: string[];
  span: number;
  /** A cell merged into the one above it. */
  continued: boolean;
}

interface Table {
  rows: string[][];
  cell?: Cell;
  /** The row under way is past MAX_ROWS: its cells are left out. */
  over?: boolean;
}

/**
 * A Word file (docx): its body's paragraphs and tables in order. A paragraph whose style is a
 * heading (by name, or an outline level) is a heading of that level; one in a numbered or bulleted
 * list is an item at its list level; a table is a table, a merged cell's text in its first place
 * and the places it spans left empty. Text boxes are read where they stand; deleted text, field
 * codes and the fallback copies of drawing content are not.
 */
export function readDocx(zip: Zip, maxChars: number): OfficeRead {
  const body = zip.read('word/document.xml');
  if (!body) throw new Error('word/document.xml is missing');
  const levels = headingLevels(zip);
  const numbering = numberingOf(zip);
  const out = new Gathered(maxChars);
  /** A table's rows or columns past the caps were left out. */
  let cut = false;
  const paras: Para[] = [];
  const tables: Table[] = [];
  /** Per list and level, the number of the last item (for numbered lists' markers). */
  const counters = new Map<string, number[]>();
  let inText = false;
  let skip = 0;

  const closePara = () => {
    const p = paras.pop();
    if (!p) return;
    const text = p.text.replace(/\s+/g, ' ').trim();
    const table = tables.at(-1);
    if (table?.cell) {
      if (text) table.cell.parts.push(text);
      return;
    }
    if (!text) return;
    const level = p.style !== undefined ? levels.get(p.style) : undefined;
    const heading =
      level ?? (p.outline !== undefined && p.outline < 9 ? Math.min(6, p.outline + 1) : undefined);
    let block: Block;
    if (heading !== undefined) block = { kind: 'heading', size: 0, level: heading, text };
    else if (p.numId !== undefined && p.numId !== '0') {
      const ordered = numbering.numbered(p.numId, p.level);
      const c = counters.get(p.numId) ?? [];
      c[p.level] = (c[p.level] ?? numbering.start(p.numId, p.level) - 1) + 1;
      c.length = p.level + 1; // a deeper list starts again after this item
      counters.set(p.numId, c);
      block = { kind: 'item', ordered, marker: ordered ? `${c[p.level]}.` : '•', text, depth: p.level };
    } else block = { kind: 'paragraph', text };
    out.add(block);
  };

  readXml(body, 'word/document.xml', {
    open: (n, a) => {
      if (skip > 0 || n === 'mc:Fallback' || n === 'w:del' || n === 'w:instrText') {
        skip++;
        return;
      }
      const p = paras.at(-1);
      switch (n) {
        case 'w:p':
          paras.push({ level: 0, text: '' });
          break;
        case 'w:pStyle':
          if (p) p.style = a['w:val'];
          break;
        case 'w:outlineLvl':
          if (p) p.outline = Number(a['w:val']);
          break;
        case 'w:numId':
          if (p) p.numId = a['w:val'];
          break;
        case 'w:ilvl':
          if (p) p.level = Math.max(0, Math.min(8, Number(a['w:val']) || 0));
          break;
        case 'w:t':
          inText = true;
          break;
        case 'w:tab':
        case 'w:br':
        case 'w:cr':
          if (p) p.text += ' ';
          break;
        case 'w:tbl':
          tables.push({ rows: [] });
          break;
        case 'w:tr': {
          const t = tables.at(-1);
          if (!t) break;
          t.over = t.rows.length >= MAX_ROWS;
          if (t.over) cut = true;
          else t.rows.push([]);
          break;
        }
        case 'w:tc': {
          const t = tables.at(-1);
          if (t) t.cell = { parts: [], span: 1, continued: false };
          break;
        }
        case 'w:gridSpan': {
          const cell = tables.at(-1)?.cell;
          if (cell) cell.span = Math.max(1, Math.min(64, Number(a['w:val']) || 1));
          break;
        }
        case 'w:vMerge': {
          const cell = tables.at(-1)?.cell;
          if (cell) cell.continued = (a['w:val'] ?? 'continue') === 'continue';
          break;
        }
      }
    },
    text: (t) => {
      if (inText && skip === 0) {
        const p = paras.at(-1);
        if (p && p.text.length <= maxChars) p.text += t;
      }
    },
    close: (n) => {
      if (skip > 0) {
        skip--;
        return;
      }
      switch (n) {
        case 'w:t':
          inText = false;
          break;
        case 'w:p':
          closePara();
          break;
        case 'w:tc': {
          const t = tables.at(-1);
          const cell = t?.cell;
          if (t && cell && !t.over) {
            const row = t.rows.at(-1);
            const places = [
              cell.continued ? '' : cell.parts.join(' '),
              ...Array<string>(cell.span - 1).fill(''),
            ];
            if (row && row.length + places.length > MAX_COLUMNS) cut = true;
            row?.push(...places.slice(0, Math.max(0, MAX_COLUMNS - (row?.length ?? 0))));
          }
          if (t) t.cell = undefined;
          break;
        }
        case 'w:tbl': {
          const t = tables.pop();
          const rows = t?.rows.filter((r) => r.some((c) => c !== '')) ?? [];
          const outer = tables.at(-1);
          if (outer?.cell) outer.cell.parts.push(rows.map((r) => r.filter(Boolean).join(' ')).join(' '));
          else if (rows.length > 0) out.add({ kind: 'table', rows });
          break;
        }
      }
    },
  });
  const pages = statedCount(zip, 'Pages') ?? 1;
  return {
    pages: [{ page: 1, blocks: out.blocks }],
    marker: null,
    truncated: out.truncated || cut,
    metadata: propertiesOf(zip, pages),
  };
}
