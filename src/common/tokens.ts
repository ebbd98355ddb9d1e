/**
 * Tokens of the texts sift sends, in OpenAI's o200k_base encoding, counted by gpt-tokenizer (exact,
 * plain JavaScript with a CommonJS build; 3–13 MB/s here against js-tiktoken's 1). Its tables take
 * about 70 MB: loaded on the first count, once per process (never in the extraction workers).
 * A page's text is ordinary text: a special token's spelling in it counts as the characters it is.
 *
 * The library merges each piece of its split (a word, a run of spaces) in time that grows with the
 * square of the piece's length: a run of MAX_RUN characters or more without a change between space
 * and non-space (100 KB of one letter, say) is counted a window of MAX_RUN characters at a time,
 * which may count a token or so more per window than the library alone. Everything else counts
 * exactly as the library does.
 */
import { loadO200k, type O200k } from '../tuning/o200k';
import { isWhiteSpace } from './white-space';
import { TokenTable } from './token-table';
import { pieceEnd, pieceReader, type PieceReader } from './token-split';
import { PieceCounts } from './piece-counts';

export { TokenTable };

/** The encoding's name, as envelopes report it. */
export const TOKENIZER = 'o200k_base';

/** The longest run of spaces, or of other characters, merged whole. */
export const MAX_RUN = 1024;

let loaded: O200k | undefined;
let reader: PieceReader;
const o200k = () => {
  if (!loaded) {
    loaded = loadO200k();
    loaded.encoding.setMergeCacheSize(0);
    reader = pieceReader(loaded.split);
  }
  return loaded;
};

const counts = new PieceCounts((piece) => o200k().pieceTokens(piece));

/** A part's tokens, piece by piece (a window of a long run is split on its own, as the library would). */
function partTokens(part: Part): number {
  const { text } = part;
  o200k();
  let n = 0;
  for (let p = 0; p < text.length;) {
    const e = pieceEnd(text, p, reader);
    n += counts.at(text, p, e);
    p = e;
  }
  return n;
}

const isSpace = (c: number) =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000;

/** What the split's `\s` matches, exactly. */
const isWhite = isWhiteSpace;

function allWhite(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isWhite(s.charCodeAt(i))) return false;
  return true;
}

/** A part of a text the library counts whole: a span as it is, or a window of an over-long run. */
interface Part {
  text: string;
  window: boolean;
}

/**
 * The text in parts the library counts whole: the spans between over-long runs as they are, each
 * over-long run in windows of MAX_RUN characters (never between a surrogate pair).
 */
function parts(text: string): Part[] {
  if (!mayHaveLongRun(text)) return [{ text, window: false }];
  const out: Part[] = [];
  let from = 0;
  let runStart = 0;
  let runSpace = text.length > 0 && isSpace(text.charCodeAt(0));
  for (let i = 1; i <= text.length; i++) {
    const space = i < text.length && isSpace(text.charCodeAt(i));
    if (i < text.length && space === runSpace) continue;
    if (i - runStart >= MAX_RUN) {
      if (runStart > from) out.push({ text: text.slice(from, runStart), window: false });
      for (let w = runStart; w < i;) {
        let end = Math.min(i, w + MAX_RUN);
        const c = text.charCodeAt(end - 1);
        if (end < i && c >= 0xd800 && c <= 0xdbff) end--;
        out.push({ text: text.slice(w, end), window: true });
        w = end;
      }
      from = i;
    }
    runStart = i;
    runSpace = space;
  }
  if (from < text.length) out.push({ text: from === 0 ? text : text.slice(from), window: false });
  return out;
}

/**
 * False when the text has no run of MAX_RUN characters or more (the usual case), checked at a few
 * places instead of at every character: such a run holds some whole stretch between two multiples
 * of MAX_RUN / 2, so a text in which each such stretch changes between space and non-space has none.
 */
export function mayHaveLongRun(text: string): boolean {
  const stride = MAX_RUN / 2;
  for (let i = 0; i + stride < text.length; i += stride) {
    const space = isSpace(text.charCodeAt(i));
    let j = i + 1;
    while (j <= i + stride && isSpace(text.charCodeAt(j)) === space) j++;
    if (j > i + stride) return true;
  }
  return false;
}

/** The last text a TokenTable was made of, and its tokens: its count, asked next, is not made again. */
let lastTable: { text: string; tokens: number } | undefined;

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (lastTable !== undefined && text.length === lastTable.text.length && text === lastTable.text)
    return lastTable.tokens;
  let n = 0;
  for (const p of parts(text)) n += partTokens(p);
  return n;
}

/** The text's pieces as the library splits it, each with its tokens, in order. */
function* piecesOf(text: string): Generator<{ text: string; tokens: number }> {
  o200k();
  for (const part of parts(text)) {
    if (part.window) {
      yield { text: part.text, tokens: partTokens(part) };
      continue;
    }
    const t = part.text;
    for (let p = 0; p < t.length;) {
      const e = pieceEnd(t, p, reader);
      yield { text: t.slice(p, e), tokens: counts.at(t, p, e) };
      p = e;
    }
  }
}

/**
 * `text` cut to at most `max` tokens, never inside a character: whole pieces while they fit, then
 * as much of the next as fits. A prefix can read a little differently at its end than inside the
 * whole text, so it is counted again and cut shorter while it has more than `max`.
 */
export function cutToTokens(
  text: string,
  max: number,
  tokens = countTokens(text),
): { text: string; tokens: number; truncated: boolean } {
  if (tokens <= max) return { text, tokens, truncated: false };
  let end = 0;
  let sum = 0;
  let over: string | undefined;
  for (const p of piecesOf(text)) {
    if (sum + p.tokens > max) {
      over = p.text;
      break;
    }
    sum += p.tokens;
    end += p.text.length;
  }
  // Of the piece that does not fit, the longest start that does (in whole characters).
  if (over !== undefined && sum < max) end += fittingStart(over, max - sum);
  for (;;) {
    const cut = wholeChars(text, end);
    const count = countTokens(cut);
    if (count <= max || cut.length === 0) return { text: cut, tokens: count, truncated: true };
    end = cut.length - 1;
  }
}

/** How many characters of `piece` the encoder reads in at most `room` tokens. */
function fittingStart(piece: string, room: number): number {
  let lo = 0;
  let hi = piece.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (countTokens(wholeChars(piece, mid)) <= room) lo = mid;
    else hi = mid - 1;
  }
  return wholeChars(piece, lo).length;
}

/** The first `end` characters of `text`, one fewer if that would end between a surrogate pair. */
function wholeChars(text: string, end: number): string {
  const c = text.charCodeAt(end - 1);
  return text.slice(0, end > 0 && end < text.length && c >= 0xd800 && c <= 0xdbff ? end - 1 : end);
}

/** The end of `text` in at most `n` tokens: its last whole pieces that fit. */
export function tailOfTokens(text: string, n: number): string {
  if (n <= 0 || text.length === 0) return '';
  const pieces = [...piecesOf(text)];
  let sum = 0;
  let from = text.length;
  for (let i = pieces.length - 1; i >= 0 && sum + pieces[i].tokens <= n; i--) {
    sum += pieces[i].tokens;
    from -= pieces[i].text.length;
  }
  return text.slice(from);
}

/**
 * The TokenTable of a text: one pass of the library's split, each piece counted once, with an
 * offset where a piece ends a line (chunks are cut at line ends; a table of every piece's offset
 * took a fifth more time than a count).
 */
export function tokenTable(text: string): TokenTable {
  const starts = [0];
  const before = [0];
  const keep = (offset: number, tokens: number) => {
    starts.push(offset);
    before.push(tokens);
  };
  let at = 0;
  let sum = 0;
  const all = parts(text);
  o200k();
  for (const [i, part] of all.entries()) {
    if (!part.window) {
      const t = part.text;
      for (let p = 0; p < t.length;) {
        const e = pieceEnd(t, p, reader);
        const from = at;
        sum += counts.at(t, p, e);
        at += e - p;
        p = e;
        const last = t.charCodeAt(e - 1);
        if (last !== 10 && last !== 13) continue;
        // A run of spaces split in two (its last space left to what follows it) would be one
        // piece in a part that ends with it: not an offset.
        if (at < text.length && from > 0 && isWhite(text.charCodeAt(from - 1)) && allWhite(text, from, at))
          continue;
        keep(at, sum);
      }
      continue;
    }
    // A window of a long run: counted whole, and an offset only where the run's windows end.
    sum += partTokens(part);
    at += part.text.length;
    if (i + 1 === all.length || !all[i + 1].window) keep(at, sum);
  }
  // The text's end is always one: nothing follows it.
  if (starts[starts.length - 1] !== text.length) keep(text.length, sum);
  lastTable = { text, tokens: sum };
  return new TokenTable(text, starts, before);
}
