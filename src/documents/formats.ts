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

function htmlBlocks(blocks: Block[]): string {
  const out: string[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    if (b.kind === 'heading') out.push(`<h${b.level}>${escapeHtml(b.text)}</h${b.level}>`);
    else if (b.kind === 'paragraph') out.push(`<p>${escapeHtml(b.text)}</p>`);
    else if (b.kind === 'table') {
      const rows = b.rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`);
      out.push(`<table>${rows.join('')}</table>`);
    } else {
      const j = listEnd(blocks, i);
      out.push(htmlList(blocks.slice(i, j) as Item[]));
      i = j - 1;
    }
  }
  return out.join('\n');
}

/**
 * Blocks a blank line apart; items of one list on consecutive lines. Joined once, so that the
 * string is flat: a string grown piece by piece is copied whole when it is sent to sift.
 */
function joinBlocks(blocks: Block[], write: (b: Block) => string): string {
  const out: string[] = [];
  blocks.forEach((b, i) => {
    const p = blocks[i - 1];
    const sameList =
      b.kind === 'item' &&
      p?.kind === 'item' &&
      (p.ordered === b.ordered || (p.depth ?? 0) !== (b.depth ?? 0));
    if (i > 0) out.push(sameList ? '\n' : '\n\n');
    out.push(write(b));
  });
  return out.join('');
}

/**
 * The pages written three ways: markdown with a `<!-- page N -->` marker before each page (N its
 * number in the document; `slide N`, `sheet N` for a deck's and a workbook's), plain text without
 * marks, and html with a `<section data-page="N">` per page. A document of one flow (a Word file)
 * is written without marks.
 */
export function writeFormats(
  pages: PageBlocks[],
  marker: 'page' | 'slide' | 'sheet' | null = 'page',
): Written {
  const md: string[] = [];
  const text: string[] = [];
  const html: string[] = [];
  for (const p of pages) {
    const body = joinBlocks(p.blocks, mdBlock);
    const mark = marker ? `<!-- ${marker} ${p.page} -->` : '';
    md.push(body && mark ? `${mark}\n\n${body}` : body || mark);
    const plain = joinBlocks(p.blocks, textBlock);
    if (plain) text.push(plain);
    const inner = htmlBlocks(p.blocks);
    html.push(marker ? `<section data-${marker}="${p.page}">\n${inner}\n</section>` : inner);
  }
  return {
    markdown: md.filter((m) => m !== '').join('\n\n'),
    text: text.join('\n\n'),
    html: html.filter((h) => h !== '').join('\n'),
  };
}
