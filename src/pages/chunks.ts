/**
 * The "chunks" format: a page's markdown in pieces for retrieval. Each heading begins a piece,
 * which holds its section up to the next heading, split at blank lines (then at line ends, then
 * between tokens) wherever it has more than `tokens` tokens. Without overlap the pieces, joined,
 * are the markdown; with it each piece after the first of its section begins with the end of the
 * one before (at most `overlap` tokens of it), within the same `tokens`.
 */
import { createHash } from 'node:crypto';
import { countTokens, cutToTokens, tailOfTokens, tokenTable, type TokenTable } from '../common/tokens';

export interface Chunk {
  /** A digest of its heading path and text: the same piece of the same page has the same id. */
  id: string;
  /** The headings it is under, outermost first ([] before the first heading). */
  heading_path: string[];
  text: string;
  tokens: number;
}

export interface ChunkAsk {
  /** At most this many tokens a piece. */
  tokens: number;
  /** Tokens of the piece before that begin each next piece of a section (0: none). */
  overlap: number;
}

export const DEFAULT_CHUNK_TOKENS = 512;

const HEADING = /^ {0,3}(#{1,6})(?=[ \t\r\n]|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** A heading's text in a path is cut to this many characters. */
const HEADING_CHARS = 200;

/** An ATX heading's level and text (its closing #s left out), or undefined for another line. */
function headingOf(line: string): { level: number; text: string } | undefined {
  const m = HEADING.exec(line);
  if (!m) return undefined;
  let text = line.slice(m[0].length).trim();
  // A closing sequence: #s at the end, after a space or alone.
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 35) end--;
  if (end < text.length && (end === 0 || text[end - 1] === ' ' || text[end - 1] === '\t'))
    text = text.slice(0, end).trimEnd();
  return { level: m[1].length, text: text.slice(0, HEADING_CHARS) };
}

interface Piece {
  text: string;
  tokens: number;
}

interface Section {
  path: string[];
  /** Its blocks: each a run of lines with the blank lines after it (a fenced block whole). */
  blocks: string[];
}

export function chunksOf(markdown: string, ask: ChunkAsk): Chunk[] {
  const out: Chunk[] = [];
  const seen = new Map<string, number>();
  // The markdown's tokens counted once: a piece's are read from it (and so is the page's count).
  const counter = new Counter(tokenTable(markdown));
  for (const s of sectionsOf(markdown)) {
    let previous: string | undefined;
    for (const piece of pack(s.blocks, ask.tokens - (ask.overlap > 0 ? ask.overlap : 0), counter)) {
      const { text, tokens } = previous === undefined ? piece : withOverlap(previous, piece, ask);
      previous = piece.text;
      const digest = createHash('sha256')
        .update(JSON.stringify([s.path, text]))
        .digest('hex')
        .slice(0, 16);
      const n = (seen.get(digest) ?? 0) + 1;
      seen.set(digest, n);
      out.push({
        id: n === 1 ? digest : `${digest}-${n}`,
        heading_path: s.path,
        text,
        tokens,
      });
    }
  }
  return out;
}

/** The markdown's sections: each heading outside a fenced block begins one. */
function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  const path: { level: number; text: string }[] = [];
  let current: Section = { path: [], blocks: [] };
  let block = '';
  let fence: string | undefined;
  let blankRun = false;
  const endBlock = () => {
    if (block) current.blocks.push(block);
    block = '';
    blankRun = false;
  };
  for (const line of markdown.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
    const f = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      block += line;
      if (f && f[0] === fence[0] && f.length >= fence.length) fence = undefined;
      continue;
    }
    const h = headingOf(line);
    if (h) {
      endBlock();
      if (current.blocks.length > 0) sections.push(current);
      const level = h.level;
      while (path.length > 0 && path[path.length - 1].level >= level) path.pop();
      path.push({ level, text: h.text });
      current = { path: path.map((p) => p.text), blocks: [] };
      block = line;
      continue;
    }
    const blank = line.trim() === '';
    if (!blank && blankRun) endBlock();
    if (f) fence = f;
    block += line;
    blankRun = blank;
  }
  endBlock();
  if (current.blocks.length > 0) sections.push(current);
  return sections;
}

/**
 * The tokens of the markdown's parts, read in order: each part's offset follows from the lengths
 * of those before it, and its tokens are the table's where it begins and ends where tokens do.
 */
class Counter {
  /** Where the next part read begins. */
  at = 0;

  constructor(private readonly table: TokenTable) {}

  /** The next part of the markdown, of `text`: its offset and tokens. */
  next(text: string): { start: number; tokens: number } {
    const start = this.at;
    this.at += text.length;
    return { start, tokens: this.count(start, text) };
  }

  /** The tokens of `text`, the markdown's from `start`. */
  count(start: number, text: string): number {
    return this.table.between(start, start + text.length) ?? countTokens(text);
  }
}

/**
 * Blocks packed in order into texts of at most `limit` tokens: a block over the limit alone is
 * split at its line ends, and a line over it between tokens.
 */
function pack(blocks: string[], limit: number, counter: Counter): Piece[] {
  const out: Piece[] = [];
  let units: { text: string; tokens: number; start: number }[] = [];
  let sum = 0;
  const flush = () => {
    // Two parts joined may read a token differently where they meet: counted together again,
    // unless they meet where the markdown's tokens do.
    while (units.length > 0) {
      const text = units.map((u) => u.text).join('');
      const tokens = units.length === 1 ? units[0].tokens : counter.count(units[0].start, text);
      if (units.length === 1 || tokens <= limit) {
        out.push({ text, tokens });
        units = [];
        sum = 0;
        return;
      }
      const last = units.pop()!;
      flush();
      units = [last];
      sum = last.tokens;
    }
  };
  const add = (text: string, tokens: number, start: number) => {
    if (sum + tokens > limit) flush();
    units.push({ text, tokens, start });
    sum += tokens;
  };
  for (const block of blocks) {
    const { start, tokens } = counter.next(block);
    if (tokens <= limit) {
      add(block, tokens, start);
      continue;
    }
    let lineStart = start;
    for (const line of block.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
      let rest = line;
      let restStart = lineStart;
      lineStart += line.length;
      while (rest) {
        // A window of the line, so that a long one is not read again whole for each piece (a
        // token is rarely over 16 characters; a window read in fewer tokens is a piece whole).
        let window = Math.min(rest.length, limit * 8);
        if (window < rest.length && /[\uD800-\uDBFF]/.test(rest[window - 1])) window--;
        const part = rest.slice(0, window);
        const cut = cutToTokens(part, limit, counter.count(restStart, part));
        // One character over the limit alone still makes a piece.
        const text = cut.text || String.fromCodePoint(rest.codePointAt(0)!);
        add(text, cut.text ? cut.tokens : countTokens(text), restStart);
        rest = rest.slice(text.length);
        restStart += text.length;
      }
    }
  }
  flush();
  return out;
}

/** `body` after the end of the piece before it, in at most `ask.tokens` tokens together. */
function withOverlap(previous: string, body: Piece, ask: ChunkAsk): Piece {
  for (let n = ask.overlap; n > 0; n--) {
    const text = tailOfTokens(previous, n) + body.text;
    const tokens = countTokens(text);
    if (tokens <= ask.tokens) return { text, tokens };
  }
  return body;
}
