import type { Block, PageBlocks } from './blocks';

/** A document's pages written in the three formats. */
export interface Written {
  markdown: string;
  text: string;
  html: string;
}

/** Markdown that reads as the text says: nothing in it starts a tag, a comment, a link or emphasis. */
function mdInline(s: string): string {
  let t = s.replace(/[\\`*[\]]/g, (c) => `\\${c}`);
  // Looked for first: the scan by letter classes took an eighth of an odt's reading.
  if (t.includes('_'))
    t = t.replace(/(^|[^\p{L}\p{N}])_|_(?=[^\p{L}\p{N}]|$)/gu, (m) => m.replace('_', '\\_'));
  if (t.includes('<')) t = t.replace(/<(?=[A-Za-z!/?])/g, '\\<');
  return t;
}

/** A paragraph's markdown: a line start that would make a heading, quote, list or rule is escaped. */
function mdParagraph(s: string): string {
  const t = mdInline(s);
  if (/^(#{1,6}(\s|$)|>|[-+](\s|$)|=+\s*$|\d{1,9}[.)](\s|$))/.test(t)) return `\\${t}`;
  return t;
}

const mdCell = (s: string) => mdInline(s).replace(/\|/g, '\\|');

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A list marker that is a letter ("a)", "(b)"): kept with its item, where a bullet is not. */
const lettered = (marker: string) => /^\(?[a-z]/.test(marker);

/** An ordered item's number as markdown writes it ("3)" and "(3)" both become "3."). */
const itemNumber = (marker: string) => /\d+/.exec(marker)?.[0];

function mdBlock(b: Block): string {
  switch (b.kind) {
    case 'heading':
      return `${'#'.repeat(b.level)} ${mdInline(b.text)}`;
    case 'paragraph':
      return mdParagraph(b.text);
    case 'item': {
      const indent = '   '.repeat(b.depth ?? 0);
      const n = b.ordered ? itemNumber(b.marker) : undefined;
      if (n) return `${indent}${n}. ${mdInline(b.text)}`;
      return `${indent}- ${mdInline(lettered(b.marker) ? `${b.marker} ${b.text}` : b.text)}`;
    }
    case 'table': {
      let width = 0;
      for (const r of b.rows) width = Math.max(width, r.length);
      const row = (r: string[]) =>
        `| ${Array.from({ length: width }, (_, i) => mdCell(r[i] ?? '')).join(' | ')} |`;
      const [head, ...rest] = b.rows;
      return [row(head), `|${' --- |'.repeat(width)}`, ...rest.map(row)].join('\n');
    }
  }
}

function textBlock(b: Block): string {
  switch (b.kind) {
    case 'heading':
    case 'paragraph':
      return b.text;
    case 'item':
      return `${'  '.repeat(b.depth ?? 0)}${b.marker} ${b.text}`;
    case 'table':
      return b.rows.map((r) => r.join('\t')).join('\n');
  }
}

type Item = Extract<Block, { kind: 'item' }>;

/** Where the list starting at i ends: its items, and deeper ones inside them. */
function listEnd(blocks: Block[], i: number): number {
  const first = blocks[i] as Item;
  let j = i + 1;
  for (; j < blocks.length; j++) {
    const c = blocks[j];
    if (c.kind !== 'item') break;
    if ((c.depth ?? 0) === (first.depth ?? 0) && c.ordered !== first.ordered) break;
    if ((c.depth ?? 0) < (first.depth ?? 0)) break;
  }
  return j;
}

/** Items of one list as html; deeper items make a list inside the item before them. */
function htmlList(items: Item[]): string {
  const depth = items[0].depth ?? 0;
  const tag = items[0].ordered ? 'ol' : 'ul';
  const lis: string[] = [];
  for (let k = 0; k < items.length;) {
    const c = items[k];
    let li = escapeHtml(lettered(c.marker) ? `${c.marker} ${c.text}` : c.text);
    let m = k + 1;
    while (m < items.length && (items[m].depth ?? 0) > depth) {
      const end = listEnd(items, m);
      li += htmlList(items.slice(m, end));
      m = end;
    }
    lis.push(`<li>${li}</li>`);
    k = m;
  }
  const n = items[0].ordered ? Number(itemNumber(items[0].marker) ?? 1) : 1;
  return `<${tag}${tag === 'ol' && n !== 1 ? ` start="${n}"` : ''}>${lis.join('')}</${tag}>`;
}

/** Where a format goes, a piece at a time, in order. */
export type Sink = (piece: string) => void;

function htmlBlocks(blocks: Block[], put: Sink): void {
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    if (i > 0) put('\n');
    if (b.kind === 'heading') put(`<h${b.level}>${escapeHtml(b.text)}</h${b.level}>`);
    else if (b.kind === 'paragraph') put(`<p>${escapeHtml(b.text)}</p>`);
    else if (b.kind === 'table') {
      const rows = b.rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`);
      put(`<table>${rows.join('')}</table>`);
    } else {
      const j = listEnd(blocks, i);
      put(htmlList(blocks.slice(i, j) as Item[]));
      i = j - 1;
    }
  }
}

/** Blocks a blank line apart; items of one list on consecutive lines. */
function joinBlocks(blocks: Block[], write: (b: Block) => string, put: Sink): void {
  blocks.forEach((b, i) => {
    const p = blocks[i - 1];
    const sameList =
      b.kind === 'item' &&
      p?.kind === 'item' &&
      (p.ordered === b.ordered || (p.depth ?? 0) !== (b.depth ?? 0));
    if (i > 0) put(sameList ? '\n' : '\n\n');
    put(write(b));
  });
}

type Marker = 'page' | 'slide' | 'sheet' | null;
export const FORMATS = ['markdown', 'text', 'html'] as const;
export type Format = (typeof FORMATS)[number];

/**
 * One format of the pages, piece by piece: markdown with a `<!-- page N -->` marker before each
 * page (N its number in the document; `slide N`, `sheet N` for a deck's and a workbook's), plain
 * text without marks, html with a `<section data-page="N">` per page; pages a blank line apart
 * (a line in html), and none that has nothing to show.
 */
export function renderFormat(format: Format, pages: PageBlocks[], marker: Marker, sink: Sink): void {
  let any = false;
  for (const p of pages) {
    // The page begins (after the one before) with its first piece that is not empty, or its mark.
    let begun = false;
    const begin = () => {
      if (any) sink(format === 'html' ? '\n' : '\n\n');
      any = begun = true;
    };
    if (format === 'markdown' && marker) {
      begin();
      sink(`<!-- ${marker} ${p.page} -->`);
      let body = false;
      joinBlocks(p.blocks, mdBlock, (x) => {
        if (x === '') return;
        if (!body) sink('\n\n');
        body = true;
        sink(x);
      });
    } else if (format === 'html' && marker) {
      begin();
      sink(`<section data-${marker}="${p.page}">\n`);
      htmlBlocks(p.blocks, sink);
      sink('\n</section>');
    } else {
      const put = (x: string) => {
        if (x === '') return;
        if (!begun) begin();
        sink(x);
      };
      if (format === 'html') htmlBlocks(p.blocks, put);
      else joinBlocks(p.blocks, format === 'markdown' ? mdBlock : textBlock, put);
    }
  }
}

/** The characters of text the pages hold, and whether any is beyond Latin-1 (the formats add none). */
export function textsOf(pages: PageBlocks[]): { chars: number; wide: boolean } {
  let chars = 0;
  let wide = false;
  const look = (t: string) => {
    chars += t.length;
    if (!wide && /[\u0100-\uffff]/.test(t)) wide = true;
  };
  for (const p of pages)
    for (const b of p.blocks) {
      if (b.kind === 'table') for (const r of b.rows) for (const c of r) look(c);
      else look(b.text);
      if (b.kind === 'item') look(b.marker);
    }
  return { chars, wide };
}

const BLOCKS = Symbol('blocks');
interface Unwritten {
  pages: PageBlocks[];
  marker: Marker;
}

/** Whether formats are written when first read (see deferFormats). */
let deferred = false;

/**
 * In a parser process: each format is written the first time it is read, and until then the pages
 * are kept (unwrittenOf), so that the process writes large formats to sift a few pieces at a time
 * without ever making one string of them (shared-file.ts). A string over 128 KB is new memory
 * that the kernel maps page by page as it is written: on the virtual machines sift was measured
 * on, 1.5 ms for each 290 KB format of an odt of 2,000 paragraphs. Elsewhere formats are written
 * at once: deferred, the reader called in process took 8 % longer (its GC, 2 mark-compacts in 100
 * odt files became 10).
 */
export function deferFormats(on = true): void {
  deferred = on;
}

/** The pages written three ways (see renderFormat); a document of one flow (a Word file) without marks. */
export function writeFormats(pages: PageBlocks[], marker: Marker = 'page'): Written {
  const w = {} as Written;
  if (!deferred) {
    for (const k of FORMATS) {
      const out: string[] = [];
      renderFormat(k, pages, marker, (x) => out.push(x));
      w[k] = out.join('');
    }
    return w;
  }
  for (const k of FORMATS)
    Object.defineProperty(w, k, {
      enumerable: true,
      configurable: true,
      get(this: Written) {
        const out: string[] = [];
        renderFormat(k, pages, marker, (x) => out.push(x));
        return keep(this, k, out.join(''));
      },
      set(this: Written, v: string) {
        keep(this, k, v);
      },
    });
  Object.defineProperty(w, BLOCKS, { value: { pages, marker } satisfies Unwritten });
  return w;
}

function keep(w: Written, k: Format, v: string): string {
  Object.defineProperty(w, k, { value: v, enumerable: true, configurable: true, writable: true });
  return v;
}

/** The pages a document's formats are to be written from, while none has been. */
export function unwrittenOf(w: Written): Unwritten | undefined {
  const u = (w as Written & { [BLOCKS]?: Unwritten })[BLOCKS];
  return u && FORMATS.every((k) => Object.getOwnPropertyDescriptor(w, k)?.get) ? u : undefined;
}

/** `rest` with the formats as they are, not written yet (a spread would write them). */
export function withFormats<T extends object>(formats: Written, rest: T): T & Written {
  return Object.defineProperties(rest, Object.getOwnPropertyDescriptors(formats)) as T & Written;
}

/** `doc` with its formats empty (they go another way) and the rest as it is; none is written. */
export function withoutFormats<T extends Written>(doc: T): T {
  const out = { markdown: '', text: '', html: '' } as T;
  for (const k of Object.keys(doc) as (keyof T)[]) if (!FORMATS.includes(k as Format)) out[k] = doc[k];
  return out;
}
