import type { Block, PageBlocks } from './blocks';

/** A document's pages written in the three formats. */
export interface Written {
  markdown: string;
  text: string;
  html: string;
}

/** Markdown that reads as the text says: nothing in it starts a tag, a comment, a link or emphasis. */
function mdInline(s: string): string {
  return s
    .replace(/[\\`*[\]]/g, (c) => `\\${c}`)
    .replace(/(^|[^\p{L}\p{N}])_|_(?=[^\p{L}\p{N}]|$)/gu, (m) => m.replace('_', '\\_'))
    .replace(/<(?=[A-Za-z!/?])/g, '\\<');
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
      const n = b.ordered ? itemNumber(b.marker) : undefined;
      if (n) return `${n}. ${mdInline(b.text)}`;
      return `- ${mdInline(lettered(b.marker) ? `${b.marker} ${b.text}` : b.text)}`;
    }
    case 'table': {
      const width = Math.max(...b.rows.map((r) => r.length));
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
      return `${b.marker} ${b.text}`;
    case 'table':
      return b.rows.map((r) => r.join('\t')).join('\n');
  }
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
      // Consecutive items of one kind make one list.
      const tag = b.ordered ? 'ol' : 'ul';
      const items: string[] = [];
      let j = i;
      for (; j < blocks.length; j++) {
        const c = blocks[j];
        if (c.kind !== 'item' || c.ordered !== b.ordered) break;
        items.push(`<li>${escapeHtml(lettered(c.marker) ? `${c.marker} ${c.text}` : c.text)}</li>`);
      }
      const n = b.ordered ? Number(itemNumber(b.marker) ?? 1) : 1;
      out.push(`<${tag}${tag === 'ol' && n !== 1 ? ` start="${n}"` : ''}>${items.join('')}</${tag}>`);
      i = j - 1;
    }
  }
  return out.join('\n');
}

/** Blocks a blank line apart; items of one list on consecutive lines. */
function joinBlocks(blocks: Block[], write: (b: Block) => string): string {
  let out = '';
  blocks.forEach((b, i) => {
    const p = blocks[i - 1];
    const sameList = b.kind === 'item' && p?.kind === 'item' && p.ordered === b.ordered;
    out += (i === 0 ? '' : sameList ? '\n' : '\n\n') + write(b);
  });
  return out;
}

/**
 * The pages written three ways: markdown with a `<!-- page N -->` marker before each page (N its
 * number in the document), plain text without marks, and html with a `<section data-page="N">`
 * per page.
 */
export function writeFormats(pages: PageBlocks[]): Written {
  const md: string[] = [];
  const text: string[] = [];
  const html: string[] = [];
  for (const p of pages) {
    const body = joinBlocks(p.blocks, mdBlock);
    md.push(body ? `<!-- page ${p.page} -->\n\n${body}` : `<!-- page ${p.page} -->`);
    const plain = joinBlocks(p.blocks, textBlock);
    if (plain) text.push(plain);
    html.push(`<section data-page="${p.page}">\n${htmlBlocks(p.blocks)}\n</section>`);
  }
  return { markdown: md.join('\n\n'), text: text.join('\n\n'), html: html.join('\n') };
}
