/** What a page's text is made of once laid out: the shape the three formats are written from. */
export type Block =
  | { kind: 'heading'; size: number; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  /** depth: 0 for a list's own items, 1 for a list inside one, and so on. */
  | { kind: 'item'; ordered: boolean; marker: string; text: string; depth?: number }
  | { kind: 'table'; rows: string[][] };

/** The characters of text a block holds (a table's cells at least one each: an empty one is written too). */
export const blockChars = (b: Block): number =>
  b.kind === 'table'
    ? b.rows.reduce((n, r) => n + r.reduce((m, c) => m + Math.max(1, c.length), 0), 0)
    : b.text.length;

export interface PageBlocks {
  /** The page's number in the document, from 1 (a slide's, a sheet's). */
  page: number;
  blocks: Block[];
}

/** A text run as pdf.js gives it (TextItem): the string, its matrix, its advance, end of line. */
export interface TextRun {
  str: string;
  dir?: string;
  transform: number[];
  width: number;
  height: number;
  hasEOL?: boolean;
}

const CJK = /[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/u;

/**
 * Lines of one block joined: a word hyphenated over the line end is whole again when the next line
 * starts in lower case (a soft hyphen always), Chinese, Japanese and Korean lines run on without a
 * space, others take one.
 */
export function joinLines(lines: string[]): string {
  let out = lines[0] ?? '';
  for (let i = 1; i < lines.length; i++) {
    const next = lines[i];
    if (out.endsWith('\u00ad')) out = out.slice(0, -1) + next;
    else if (/\p{L}-$/u.test(out) && /^\p{Ll}/u.test(next)) out = out.slice(0, -1) + next;
    else if (CJK.test(out.slice(-1)) && CJK.test(next.charAt(0))) out += next;
    else out += ' ' + next;
  }
  return out;
}

/**
 * Heading levels for the whole document: the distinct heading sizes, largest first, are levels 1,
 * 2 and 3; any smaller still are level 3.
 */
export function rankHeadings(pages: PageBlocks[]): void {
  const sizes = new Set<number>();
  for (const p of pages) for (const b of p.blocks) if (b.kind === 'heading') sizes.add(b.size);
  const ranked = [...sizes].sort((a, b) => b - a);
  for (const p of pages)
    for (const b of p.blocks) if (b.kind === 'heading') b.level = Math.min(3, ranked.indexOf(b.size) + 1);
}
