import type { Block, PageBlocks } from '../blocks';
import { Gathered } from './gathered';
import type { OfficeRead } from './office-reader';
import { propertiesOf } from './properties';
import type { PageRange } from '../page-ranges';
import { isNamed } from '../page-select';
import { Enough, readXml } from './xml';
import { MAX_COLUMNS, MAX_ROWS } from './xlsx';
import type { Zip } from './zip';

/** Which list styles number their items, by style name and level (from content.xml and styles.xml). */
function numberedLevels(zip: Zip): Set<string> {
  const out = new Set<string>();
  for (const part of ['styles.xml', 'content.xml']) {
    const bytes = zip.read(part);
    if (!bytes) continue;
    let style: string | undefined;
    readXml(bytes, part, {
      open: (n, a) => {
        if (n === 'text:list-style') style = a['style:name'];
        else if (n === 'text:list-level-style-number' && style) out.add(`${style}/${a['text:level']}`);
      },
      close: (n) => {
        if (n === 'text:list-style') style = undefined;
      },
    });
  }
  return out;
}

/** The count meta.xml states (meta:document-statistic's page-count), when it does. */
function statedPages(zip: Zip): number | undefined {
  let pages: number | undefined;
  const bytes = zip.read('meta.xml');
  if (bytes) {
    readXml(bytes, 'meta.xml', {
      open: (n, a) => {
        const v = Number(a['meta:page-count']);
        if (n === 'meta:document-statistic' && Number.isInteger(v) && v > 0) pages = v;
      },
    });
  }
  return pages;
}

interface Table {
  rows: string[][];
  row?: string[];
  /** Empty cells seen since the last with text: placed only if one with text follows. */
  gap: number;
  rowRepeat: number;
  /** A covered cell (the places a spanned cell takes) is an empty place. */
  cell?: { parts: string[]; repeat: number; covered: boolean };
}

const repeat = (v: string | undefined, max: number) => Math.max(1, Math.min(max, Number(v) || 1));

/**
 * An OpenDocument file (odt, ods, odp), from content.xml: headings by outline level, paragraphs,
 * lists nested as they are (numbered by their list style), tables with spanned and covered cells;
 * each sheet of a spreadsheet a table under its name (`<!-- sheet N -->`), each page of a
 * presentation a slide (`<!-- slide N -->`) with its title frame as a heading and its notes.
 * Repeated rows and cells are written out only where they hold text, within the workbook caps.
 */
export function readOdf(
  zip: Zip,
  maxChars: number,
  kind: 'text' | 'spreadsheet' | 'presentation',
  ranges?: PageRange[],
): OfficeRead {
  const numbered = numberedLevels(zip);
  const out = new Gathered(maxChars);
  const pages: PageBlocks[] = [];
  const tables: Table[] = [];
  /** Open lists: their style (inner lists without one take their outer's) and items so far. */
  const lists: { style?: string; n: number }[] = [];
  /** By depth, the count the last list there ended at (for a list that continues it). */
  const lastCount: number[] = [];
  /** Open paragraphs (a text box's inside another's). */
  const paras: { text: string; heading?: number }[] = [];
  let frame: string | undefined;
  let notes = 0;
  let rowsLeft = MAX_ROWS;
  let cut = false;
  let section = 0;
  let title: string | undefined;

  // A sheet or slide the `pages` option leaves out is passed over as it is read.
  let skipped = false;
  out.skipping = kind !== 'text' && !isNamed(ranges, 1);
  const page = () => {
    if (kind === 'text') return;
    const blocks = out.take();
    section++;
    if (out.skipping) skipped = true;
    else if (title !== undefined) {
      pages.push({ page: section, blocks: [{ kind: 'heading', size: 0, level: 1, text: title }, ...blocks] });
    } else pages.push({ page: section, blocks });
    out.skipping = !isNamed(ranges, section + 1);
  };
  const add = (b: Block) => {
    if (!out.add(b)) throw new Enough();
  };
  const closePara = () => {
    const p = paras.pop();
    const text = p?.text.replace(/\s+/g, ' ').trim();
    if (!p || !text) return;
    const cell = tables.at(-1)?.cell;
    if (cell) return void cell.parts.push(text);
    if (notes > 0) return add({ kind: 'paragraph', text: `Notes: ${text}` });
    if (p.heading !== undefined) return add({ kind: 'heading', size: 0, level: p.heading, text });
    if (frame === 'title') return add({ kind: 'heading', size: 0, level: 2, text });
    if (lists.length > 0) {
      const depth = lists.length - 1;
      const style = lists.findLast((l) => l.style !== undefined)?.style;
      const ordered = style !== undefined && numbered.has(`${style}/${depth + 1}`);
      return add({ kind: 'item', ordered, marker: ordered ? `${lists[depth].n}.` : '•', text, depth });
    }
    add({ kind: 'paragraph', text });
  };

  const closeCell = (t: Table) => {
    const c = t.cell;
    t.cell = undefined;
    if (!c || !t.row) return;
    const text = c.covered ? '' : c.parts.join(' ');
    // Empty places count only up to the row's width; a full row takes nothing more.
    if (text === '') return void (t.gap = Math.min(t.gap + c.repeat, MAX_COLUMNS));
    const room = MAX_COLUMNS - t.row.length;
    if (t.gap + c.repeat > room) cut = true;
    const gap = Math.min(t.gap, room);
    t.gap = 0;
    t.row.push(...Array<string>(gap).fill(''), ...Array<string>(Math.min(c.repeat, room - gap)).fill(text));
  };

  readXml(zip.read('content.xml')!, 'content.xml', {
    open: (n, a) => {
      const t = tables.at(-1);
      switch (n) {
        case 'text:h':
          paras.push({ text: '', heading: Math.min(6, repeat(a['text:outline-level'], 6)) });
          break;
        case 'text:p':
          paras.push({ text: '' });
          break;
        case 'text:s':
          if (paras.length > 0) paras[paras.length - 1].text += ' '.repeat(repeat(a['text:c'], 100));
          break;
        case 'text:tab':
        case 'text:line-break':
          if (paras.length > 0) paras[paras.length - 1].text += ' ';
          break;
        case 'text:list': {
          // A list that continues the one before (at its depth) goes on counting from it.
          const goesOn = a['text:continue-numbering'] === 'true' || a['text:continue-list'] !== undefined;
          lists.push({ style: a['text:style-name'], n: goesOn ? (lastCount[lists.length] ?? 0) : 0 });
          break;
        }
        case 'text:list-item': {
          const list = lists.at(-1);
          const start = Number(a['text:start-value']);
          if (list) list.n = Number.isInteger(start) && start > 0 && start < 1e6 ? start : list.n + 1;
          break;
        }
        case 'draw:page':
          title = undefined;
          break;
        case 'draw:frame':
          frame = a['presentation:class'];
          break;
        case 'presentation:notes':
          notes++;
          break;
        case 'table:table':
          if (kind === 'spreadsheet' && tables.length === 0) title = a['table:name'];
          tables.push({ rows: [], gap: 0, rowRepeat: 1 });
          break;
        case 'table:table-row':
          if (t) {
            t.row = [];
            t.gap = 0;
            t.rowRepeat = repeat(a['table:number-rows-repeated'], 2 ** 30);
          }
          break;
        case 'table:table-cell':
        case 'table:covered-table-cell':
          if (t) {
            const times = repeat(a['table:number-columns-repeated'], MAX_COLUMNS * 64);
            t.cell = { parts: [], repeat: times, covered: n === 'table:covered-table-cell' };
          }
          break;
      }
    },
    text: (s) => {
      const p = paras.at(-1);
      if (p && p.text.length <= maxChars) p.text += s;
    },
    close: (n) => {
      const t = tables.at(-1);
      switch (n) {
        case 'text:h':
        case 'text:p':
          closePara();
          break;
        case 'text:list': {
          const list = lists.pop();
          if (list) lastCount[lists.length] = list.n;
          break;
        }
        case 'draw:frame':
          frame = undefined;
          break;
        case 'presentation:notes':
          notes--;
          break;
        case 'draw:page':
          page();
          break;
        case 'table:table-cell':
        case 'table:covered-table-cell':
          if (t) closeCell(t);
          break;
        case 'table:table-row':
          if (t?.row && t.row.length > 0 && !out.skipping) {
            if (t.rowRepeat > rowsLeft) {
              cut = true;
              if (rowsLeft === 0) throw new Enough();
            }
            const times = Math.min(t.rowRepeat, rowsLeft);
            for (let i = 0; i < times; i++) t.rows.push(t.row);
            rowsLeft -= times;
          }
          if (t) t.row = undefined;
          break;
        case 'table:table': {
          const done = tables.pop();
          if (!done) break;
          const outer = tables.at(-1)?.cell;
          if (outer) outer.parts.push(done.rows.map((r) => r.filter(Boolean).join(' ')).join(' '));
          else if (done.rows.length > 0) add({ kind: 'table', rows: done.rows });
          if (kind === 'spreadsheet' && tables.length === 0) page();
          break;
        }
      }
    },
  });
  // The table under way when a cap stopped the reading keeps its rows; then a flow's one page,
  // or the sheet or slide under way.
  if (tables[0]?.rows.length) out.add({ kind: 'table', rows: tables[0].rows });
  if (kind === 'text') pages.push({ page: 1, blocks: out.take() });
  else if (out.blocks.length > 0 || (kind === 'spreadsheet' && tables.length > 0)) page();
  const count = kind === 'text' ? (statedPages(zip) ?? 1) : section;
  return {
    pages,
    marker: kind === 'text' ? null : kind === 'spreadsheet' ? 'sheet' : 'slide',
    truncated: cut || skipped || out.truncated,
    metadata: propertiesOf(zip, count),
  };
}
