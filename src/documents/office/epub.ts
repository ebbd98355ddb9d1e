import * as path from 'node:path';
import { Parser } from 'htmlparser2';
import type { PageRange } from '../page-ranges';
import { isNamed } from '../page-select';
import type { Block, PageBlocks } from '../blocks';
import { Gathered } from './gathered';
import type { OfficeRead } from './office-reader';
import { MAX_COLUMNS } from './xlsx';
import { decodeInPieces, local, readXml } from './xml';
import type { Zip } from './zip';

/** Chapters read of a book at most. */
const MAX_CHAPTERS = 2000;

/** Elements whose text is never the book's. */
const SKIP = new Set(['head', 'script', 'style', 'svg', 'math', 'template', 'nav']);
/** Elements that end the text before them and start a block of their own. */
const BLOCK = new Set([
  'p', 'div', 'section', 'article', 'blockquote', 'pre', 'dd', 'dt', 'figcaption', 'caption',
  'header', 'footer', 'aside', 'address', 'hr', 'body',
]); // prettier-ignore

interface Book {
  title?: string;
  author?: string;
  language?: string;
  date?: string;
  description?: string;
  chapters: string[];
}

/** A manifest href as a part name: its fragment dropped, percent-escapes undone where they are whole. */
function hrefPath(href: string): string {
  const bare = href.split('#')[0];
  try {
    return decodeURIComponent(bare);
  } catch {
    return bare;
  }
}

/** The package document (OPF): the book's metadata and its reading order (the spine). */
function bookOf(zip: Zip): Book {
  let opf: string | undefined;
  const container = zip.read('META-INF/container.xml');
  if (!container) throw new Error('META-INF/container.xml is missing');
  readXml(container, 'META-INF/container.xml', {
    open: (n, a) => {
      if (local(n) === 'rootfile' && !opf) opf = a['full-path'];
    },
  });
  if (!opf || !zip.has(opf)) throw new Error('the package document the container names is missing');
  const dir = path.posix.dirname(opf);
  const items = new Map<string, { href: string; type: string }>();
  const spine: string[] = [];
  const meta: Record<string, string> = {};
  let field: string | undefined;
  readXml(zip.read(opf)!, opf, {
    open: (n, a) => {
      const name = local(n);
      if (name === 'item' && a.id && a.href) items.set(a.id, { href: a.href, type: a['media-type'] ?? '' });
      else if (name === 'itemref' && a.idref && a.linear !== 'no') spine.push(a.idref);
      else if (n.startsWith('dc:')) field = name;
    },
    text: (t) => {
      if (field && (meta[field]?.length ?? 0) < 4000) meta[field] = (meta[field] ?? '') + t;
    },
    close: (n) => {
      if (n.startsWith('dc:')) field = undefined;
    },
  });
  const chapters = spine
    .map((id) => items.get(id))
    .filter((i): i is { href: string; type: string } => !!i && /html/.test(i.type))
    .map((i) => path.posix.normalize(path.posix.join(dir, hrefPath(i.href))));
  return {
    title: meta.title,
    author: meta.creator,
    language: meta.language,
    date: meta.date,
    description: meta.description,
    chapters,
  };
}

/**
 * One chapter's XHTML as blocks, by htmlparser2 (lenient, as e-books need; it decodes HTML's own
 * entities and no others, and reads no DTD): headings, paragraphs, lists nested as they are,
 * tables; nothing of head, scripts, styles or the navigation.
 */
function chapterBlocks(bytes: Uint8Array): Block[] {
  const blocks: Block[] = [];
  let text = '';
  let heading: number | undefined;
  let skip = 0;
  const lists: { ordered: boolean; n: number }[] = [];
  let inItem = false;
  const tables: { rows: string[][]; row?: string[]; cell?: string[] }[] = [];
  const flush = () => {
    const t = text.replace(/\s+/g, ' ').trim();
    text = '';
    if (!t) return;
    const table = tables.at(-1);
    if (table?.cell) return void table.cell.push(t);
    if (heading !== undefined) return void blocks.push({ kind: 'heading', size: 0, level: heading, text: t });
    const list = lists.at(-1);
    if (inItem && list) {
      const marker = list.ordered ? `${list.n}.` : '•';
      return void blocks.push({
        kind: 'item',
        ordered: list.ordered,
        marker,
        text: t,
        depth: lists.length - 1,
      });
    }
    blocks.push({ kind: 'paragraph', text: t });
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (skip > 0 || SKIP.has(name)) return void skip++;
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = Number(name[1]);
        } else if (name === 'ul' || name === 'ol') {
          flush();
          lists.push({ ordered: name === 'ol', n: 0 });
        } else if (name === 'li') {
          flush();
          const list = lists.at(-1);
          if (list) list.n++;
          inItem = true;
        } else if (name === 'table') {
          flush();
          tables.push({ rows: [] });
        } else if (name === 'tr') {
          const t = tables.at(-1);
          if (t) t.row = [];
        } else if (name === 'td' || name === 'th') {
          flush();
          const t = tables.at(-1);
          if (t) t.cell = [];
        } else if (name === 'br') text += ' ';
        else if (BLOCK.has(name)) flush();
      },
      ontext(t) {
        if (skip === 0) text += t;
      },
      onclosetag(name) {
        if (skip > 0) return void skip--;
        if (/^h[1-6]$/.test(name)) {
          flush();
          heading = undefined;
        } else if (name === 'li') {
          flush();
          inItem = false;
        } else if (name === 'ul' || name === 'ol') {
          flush();
          lists.pop();
          inItem = lists.length > 0;
        } else if (name === 'td' || name === 'th') {
          flush();
          const t = tables.at(-1);
          if (t?.row && t.cell && t.row.length < MAX_COLUMNS) t.row.push(t.cell.join(' '));
          if (t) t.cell = undefined;
        } else if (name === 'tr') {
          const t = tables.at(-1);
          if (t?.row && t.row.some((c) => c !== '')) t.rows.push(t.row);
          if (t) t.row = undefined;
        } else if (name === 'table') {
          flush();
          const t = tables.pop();
          const outer = tables.at(-1);
          if (t && outer?.cell) outer.cell.push(t.rows.map((r) => r.join(' ')).join(' '));
          else if (t && t.rows.length > 0) blocks.push({ kind: 'table', rows: t.rows });
        } else if (BLOCK.has(name)) flush();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: true },
  );
  decodeInPieces(bytes, (s) => parser.write(s));
  parser.end();
  flush();
  return blocks;
}

/**
 * An e-book (EPUB 2 or 3): its chapters in reading order, as one flow (no marks), with the book's
 * title, author, language, date and description; `metadata.pages` counts the chapters.
 */
export function readEpub(zip: Zip, maxChars: number, ranges?: PageRange[]): OfficeRead {
  const book = bookOf(zip);
  const out = new Gathered(maxChars);
  const chapters = book.chapters.slice(0, MAX_CHAPTERS);
  let skipped = false;
  for (const [i, chapter] of chapters.entries()) {
    if (!isNamed(ranges, i + 1)) {
      skipped = true;
      continue;
    }
    const bytes = zip.read(chapter);
    if (!bytes) continue;
    for (const b of chapterBlocks(bytes)) if (!out.add(b)) break;
    if (out.truncated) break;
  }
  const clean = (s?: string) => s?.replace(/\s+/g, ' ').trim().slice(0, 1000) || undefined;
  const date = book.date ? new Date(book.date.trim()) : undefined;
  const metadata = {
    title: clean(book.title),
    author: clean(book.author),
    description: clean(book.description),
    published_at: date && !Number.isNaN(date.getTime()) ? date.toISOString() : undefined,
    language: clean(book.language),
    pages: book.chapters.length,
  };
  for (const k of Object.keys(metadata) as (keyof typeof metadata)[])
    if (metadata[k] === undefined) delete metadata[k];
  const pages: PageBlocks[] = [{ page: 1, blocks: out.take() }];
  return {
    pages,
    marker: null,
    truncated: out.truncated || skipped || chapters.length < book.chapters.length,
    metadata,
  };
}
