import { joinLines, type Block, type TextRun } from './blocks';

/** A line of text on the page: where it starts and ends, its size, its cells when far apart. */
interface Line {
  cells: string[];
  size: number;
  x: number;
  y: number;
  /** Where its last visible run ends (x). */
  end: number;
  /** Characters by text size, for the line's own size and the page's body size. */
  bySize: Map<number, number>;
}

/** Runs this far apart (in text sizes) on one baseline are separate cells (a table, a tab stop). */
const CELL_GAP = 2.5;
/** A heading is at least this much larger than the page's body text (and 1 pt larger). */
const HEADING_RATIO = 1.15;
/** A heading is short: at most this many lines and characters. */
const HEADING_LINES = 3;
const HEADING_CHARS = 200;

const BULLET =
  /^([\u2022\u25e6\u25aa\u25ab\u2023\u2043\u25cf\u25cb\u25a0\u25a1\u25ba\u25b8\u2013*-])\s+(\S.*)$/u;
const NUMBERED = /^(\(?(\d{1,3}|[a-z])[.)])\s+(\S.*)$/u;

const round = (n: number) => Math.round(n * 2) / 2;

/** The lines of a page, in the order the page draws them (a column at a time, as typeset). */
export function linesOf(runs: TextRun[]): Line[] {
  const lines: Line[] = [];
  let cur: Line | undefined;
  let ended = false;
  let spaced = false;
  for (const run of runs) {
    const t = run.transform;
    const size = Math.hypot(t[2], t[3]) || run.height || 1;
    const x = t[4];
    const y = t[5];
    const blank = run.str.trim() === '';
    if (!blank) {
      if (!cur || ended || Math.abs(y - cur.y) > 0.5 * Math.max(size, cur.size)) {
        cur = { cells: [''], size, x, y, end: x, bySize: new Map() };
        lines.push(cur);
      } else {
        const gap = x - cur.end;
        const last = cur.cells.length - 1;
        if (gap > CELL_GAP * size && cur.cells[last] !== '') cur.cells.push('');
        else if ((spaced || gap > 0.15 * size) && !/\s$/.test(cur.cells[last]) && !/^\s/.test(run.str))
          cur.cells[last] += ' ';
      }
      const last = cur.cells.length - 1;
      cur.cells[last] += run.str;
      cur.end = Math.max(cur.end, x + run.width);
      const k = round(size);
      cur.bySize.set(k, (cur.bySize.get(k) ?? 0) + run.str.length);
      ended = false;
      spaced = false;
    } else if (run.str !== '') spaced = true;
    if (run.hasEOL) ended = true;
  }
  for (const l of lines) {
    l.cells = l.cells.map((c) => c.replace(/\s+/g, ' ').trim()).filter((c) => c !== '');
    l.size = mostCommon(l.bySize) ?? round(l.size);
  }
  return lines.filter((l) => l.cells.length > 0);
}

/** The key with the largest count. */
function mostCommon(counts: Map<number, number>): number | undefined {
  let best: number | undefined;
  let most = -1;
  for (const [k, n] of counts)
    if (n > most) {
      best = k;
      most = n;
    }
  return best;
}

/**
 * The usual distance between lines of the same size on this page (their leading): the most common
 * step, the smaller of two as common (lines outnumber paragraph gaps on a page of prose).
 */
function leading(lines: Line[], body: number): number {
  const steps = new Map<number, number>();
  for (let i = 1; i < lines.length; i++) {
    const a = lines[i - 1];
    const b = lines[i];
    const dy = round(a.y - b.y);
    if (a.size === b.size && dy > 0 && dy < 3 * b.size) steps.set(dy, (steps.get(dy) ?? 0) + 1);
  }
  let best: number | undefined;
  let most = 0;
  for (const [dy, n] of steps)
    if (n > most || (n === most && best !== undefined && dy < best)) {
      best = dy;
      most = n;
    }
  return best ?? 1.2 * body;
}

interface Open {
  kind: 'heading' | 'paragraph' | 'item' | 'table';
  size: number;
  lines: string[];
  rows: string[][];
  marker?: string;
  ordered?: boolean;
  x: number;
  last: Line;
}

/**
 * A page's blocks: headings where text is clearly larger than the page's body text (the size
 * most of its characters have) and short, paragraphs split where the gap between lines is larger
 * than the page's usual leading or a line starts indented, list items where a line starts with a
 * bullet or a number, tables where lines have cells far apart. Heading levels are set later, for
 * the whole document (see rankHeadings).
 */
export function layOut(runs: TextRun[]): Block[] {
  const lines = linesOf(runs);
  if (lines.length === 0) return [];
  const chars = new Map<number, number>();
  for (const l of lines) for (const [k, n] of l.bySize) chars.set(k, (chars.get(k) ?? 0) + n);
  const body = mostCommon(chars) ?? 10;
  const lead = leading(lines, body);
  const isHeading = (size: number) => size >= body * HEADING_RATIO && size >= body + 1;
  const blocks: Block[] = [];
  let open: Open | undefined;
  const close = () => {
    if (open) blocks.push(...finish(open));
    open = undefined;
  };
  for (const line of lines) {
    const text = line.cells.join(' ');
    const kind = isHeading(line.size) ? 'heading' : line.cells.length > 1 ? 'table' : 'paragraph';
    const prev = open?.last;
    const dy = prev ? prev.y - line.y : 0;
    const step = Math.max(lead * 1.35 + 0.5, 1.5 * line.size);
    const near = prev !== undefined && dy > 0 && dy <= step && Math.abs(prev.size - line.size) < 0.75;
    const item = kind === 'paragraph' ? listItem(text) : undefined;
    if (kind === 'table') {
      if (open?.kind === 'table' && dy > 0 && dy <= 2.5 * lead) open.rows.push(line.cells);
      else {
        close();
        open = { kind, size: line.size, lines: [], rows: [line.cells], x: line.x, last: line };
      }
    } else if (item) {
      close();
      open = { kind: 'item', size: line.size, lines: [item.text], rows: [], x: line.x, last: line, ...item };
    } else if (
      open &&
      near &&
      (open.kind === kind ||
        (open.kind === 'item' && kind === 'paragraph' && line.x > open.x + 0.3 * line.size)) &&
      !(open.kind === 'paragraph' && line.x - prev!.x > 0.8 * line.size && line.x - prev!.x < 8 * line.size)
    ) {
      open.lines.push(text);
    } else {
      close();
      open = { kind, size: line.size, lines: [text], rows: [], x: line.x, last: line };
    }
    open.last = line;
  }
  close();
  return blocks;
}

function listItem(text: string): { marker: string; ordered: boolean; text: string } | undefined {
  const b = BULLET.exec(text);
  if (b) return { marker: b[1], ordered: false, text: b[2] };
  const n = NUMBERED.exec(text);
  if (n) return { marker: n[1], ordered: /^\(?\d/.test(n[1]), text: n[3] };
  return undefined;
}

/** The block an open one becomes: a heading too long to be one is a paragraph; a one-row table a line. */
function finish(o: Open): Block[] {
  if (o.kind === 'table')
    return o.rows.length > 1
      ? [{ kind: 'table', rows: o.rows }]
      : [{ kind: 'paragraph', text: o.rows[0].join(' ') }];
  const text = joinLines(o.lines);
  if (o.kind === 'heading')
    // A drop cap (one large letter) is no heading.
    return o.lines.length <= HEADING_LINES &&
      text.length <= HEADING_CHARS &&
      text.replace(/\s/g, '').length > 1
      ? [{ kind: 'heading', size: o.size, level: 1, text }]
      : [{ kind: 'paragraph', text }];
  if (o.kind === 'item') return [{ kind: 'item', ordered: !!o.ordered, marker: o.marker ?? '-', text }];
  return [{ kind: 'paragraph', text }];
}
