/**
 * The "chunks" format: a page's markdown in pieces for retrieval. Each heading begins a piece,
 * which holds its section up to the next heading, split at blank lines (then at line ends, then
 * between tokens) wherever it has more than `tokens` tokens. Without overlap the pieces, joined,
 * are the markdown; with it each piece after the first of its section begins with the end of the
 * one before (at most `overlap` tokens of it), within the same `tokens`.
 */
import { hash } from 'node:crypto';
import { countTokens, cutToTokens, tailOfTokens, tokenTable, type TokenTable } from '../common/tokens';
import { isWhiteSpace } from '../common/white-space';

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
  /**
   * Its blocks, as offsets in the markdown (each block's start, then its end): each a run of lines
   * with the blank lines after it (a fenced block whole).
   */
  blocks: number[];
}

export function chunksOf(markdown: string, ask: ChunkAsk): Chunk[] {
  const out: Chunk[] = [];
  const seen = new Map<string, number>();
  // The markdown's tokens counted once: a piece's are read from it (and so is the page's count).
  const counter = new Counter(markdown, tokenTable(markdown));
  for (const s of sectionsOf(markdown)) {
    let previous: string | undefined;
    for (const piece of pack(s.blocks, ask.tokens - (ask.overlap > 0 ? ask.overlap : 0), counter)) {
      const { text, tokens } = previous === undefined ? piece : withOverlap(previous, piece, ask);
      previous = piece.text;
      const digest = hash('sha256', JSON.stringify([s.path, text]), 'hex').slice(0, 16);
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

/** Where the line that begins at `at` ends (after its line end, if it has one). */
const lineEnd = (text: string, at: number, end = text.length): number => {
  const nl = text.indexOf('\n', at);
  return nl < 0 || nl >= end ? end : nl + 1;
};

/** The code of a line's first character after at most three spaces (NaN at the text's end). */
function leadOf(text: string, at: number): number {
  let c = text.charCodeAt(at);
  for (let i = 1; i <= 3 && c === 32; i++) c = text.charCodeAt(at + i);
  return c;
}

/** Whether text.slice(from, to) is only spaces (what trim() removes). */
function blankBetween(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isWhiteSpace(text.charCodeAt(i))) return false;
  return true;
}

/** The markdown's sections: each heading outside a fenced block begins one. */
function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  const path: { level: number; text: string }[] = [];
  let current: Section = { path: [], blocks: [] };
  // The block being read, from `block` (-1: none yet).
  let block = -1;
  let fence: string | undefined;
  let blankRun = false;
  const endBlock = (at: number) => {
    if (block >= 0 && at > block) current.blocks.push(block, at);
    block = -1;
    blankRun = false;
  };
  for (let at = 0; at < markdown.length;) {
    const end = lineEnd(markdown, at);
    const lead = leadOf(markdown, at);
    // Only a line that begins with # can be a heading, and only one with ` or ~ a fence.
    const f = lead === 96 || lead === 126 ? FENCE.exec(markdown.slice(at, end))?.[1] : undefined;
    if (fence !== undefined) {
      if (f && f[0] === fence[0] && f.length >= fence.length) fence = undefined;
      at = end;
      continue;
    }
    const h = lead === 35 ? headingOf(markdown.slice(at, end)) : undefined;
    if (h) {
      endBlock(at);
      if (current.blocks.length > 0) sections.push(current);
      while (path.length > 0 && path[path.length - 1].level >= h.level) path.pop();
      path.push(h);
      current = { path: path.map((p) => p.text), blocks: [] };
      block = at;
      at = end;
      continue;
    }
    const blank = blankBetween(markdown, at, end);
    if (!blank && blankRun) endBlock(at);
    if (block < 0) block = at;
    if (f) fence = f;
    blankRun = blank;
    at = end;
  }
  endBlock(markdown.length);
  if (current.blocks.length > 0) sections.push(current);
  return sections;
}

/**
 * The tokens of the markdown's parts: a part's are the table's where it begins and ends where
 * tokens do, else counted.
 */
class Counter {
  constructor(
    readonly markdown: string,
    private readonly table: TokenTable,
  ) {}

  /** The tokens of the markdown from `start` to `end`, or of `text`, its text there. */
  count(start: number, end: number, text?: string): number {
    return this.table.between(start, end) ?? countTokens(text ?? this.markdown.slice(start, end));
  }
}

/**
 * Blocks packed in order into texts of at most `limit` tokens: a block over the limit alone is
 * split at its line ends, and a line over it between tokens. Every part packed is the markdown's
 * next one, so a piece is the markdown from its first part's start to its last's end.
 */
function pack(blocks: number[], limit: number, counter: Counter): Piece[] {
  const { markdown } = counter;
  const out: Piece[] = [];
  // The parts in the piece being packed: from `from`, the ends of each and their tokens.
  let from = -1;
  let ends: number[] = [];
  let counts: number[] = [];
  let sum = 0;
  const flush = () => {
    // Two parts joined may read a token differently where they meet: counted together again,
    // unless they meet where the markdown's tokens do.
    while (ends.length > 0) {
      const end = ends[ends.length - 1];
      const tokens = ends.length === 1 ? counts[0] : counter.count(from, end);
      if (ends.length === 1 || tokens <= limit) {
        out.push({ text: markdown.slice(from, end), tokens });
        from = -1;
        ends = [];
        counts = [];
        sum = 0;
        return;
      }
      const last = { start: ends[ends.length - 2], end: ends.pop()!, tokens: counts.pop()! };
      flush();
      from = last.start;
      ends = [last.end];
      counts = [last.tokens];
      sum = last.tokens;
    }
  };
  const add = (start: number, end: number, tokens: number) => {
    if (sum + tokens > limit) flush();
    if (from < 0) from = start;
    ends.push(end);
    counts.push(tokens);
    sum += tokens;
  };
  for (let b = 0; b < blocks.length; b += 2) {
    const start = blocks[b];
    const end = blocks[b + 1];
    const tokens = counter.count(start, end);
    if (tokens <= limit) {
      add(start, end, tokens);
      continue;
    }
    for (let lineStart = start; lineStart < end;) {
      const lineStop = lineEnd(markdown, lineStart, end);
      let restStart = lineStart;
      lineStart = lineStop;
      while (restStart < lineStop) {
        // A window of the line, so that a long one is not read again whole for each piece (a
        // token is rarely over 16 characters; a window read in fewer tokens is a piece whole).
        let window = Math.min(lineStop - restStart, limit * 8);
        const last = markdown.charCodeAt(restStart + window - 1);
        if (restStart + window < lineStop && last >= 0xd800 && last <= 0xdbff) window--;
        const part = markdown.slice(restStart, restStart + window);
        const cut = cutToTokens(part, limit, counter.count(restStart, restStart + window, part));
        // One character over the limit alone still makes a piece.
        const length = cut.text
          ? cut.text.length
          : String.fromCodePoint(markdown.codePointAt(restStart)!).length;
        const text = cut.text || markdown.slice(restStart, restStart + length);
        add(restStart, restStart + length, cut.text ? cut.tokens : countTokens(text));
        restStart += length;
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
