/**
 * A document's words as PostgreSQL's full-text index keeps them, worked out by sift: each word of
 * the title and the body (a run of letters and digits, lower-cased, without diacritics, stemmed
 * by Porter2, the English Snowball stemmer PostgreSQL's 'english' configuration uses), with its
 * positions and weight (title A, body B), written as a tsvector literal. The database only reads
 * the literal: its own parser (to_tsvector) cost 2 ms of the shared server's CPU for a 17 KB page,
 * a third of a batch target's work on PostgreSQL, and with several instances the server is the
 * one part they share. A query's words go through the same steps, so they meet the documents'
 * whatever the text: no word is dropped as a stop word (as SQLite's FTS5 keeps them too).
 */
const stem = require('wink-porter2-stemmer') as (word: string) => string;

/**
 * PostgreSQL's limits: a lexeme's bytes, its positions, the highest position, and (with a margin)
 * a tsvector's lexemes and positions.
 */
const MAX_LEXEME_BYTES = 2047;
const MAX_POSITIONS = 256;
const MAX_POSITION = 16383;
const MAX_VECTOR_BYTES = 1_000_000;

/** A longer word is no word anyone searches for (PostgreSQL leaves out those over 2047 bytes). */
const MAX_WORD_CHARS = 256;

const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
const MARKS = /\p{M}/gu;
/** A word's letters are stemmed only when they are the a–z the stemmer knows. */
const ASCII_LETTERS = /^[a-z]+$/;

/** Whether each character of the Basic Multilingual Plane is a word's: 0 not known yet, 1 yes, 2 no. */
const bmp = new Uint8Array(0x10000);

function isWordChar(cp: number): boolean {
  if (cp < 128) return (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57);
  if (cp > 0xffff) return WORD_CHAR.test(String.fromCodePoint(cp));
  if (bmp[cp] === 0) bmp[cp] = WORD_CHAR.test(String.fromCharCode(cp)) ? 1 : 2;
  return bmp[cp] === 1;
}

/** Calls `fn` with each word of `text` as the index keeps it, in order. */
function eachWord(text: string, fn: (lexeme: string) => void): void {
  let from = -1;
  for (let i = 0; i <= text.length;) {
    const cp = i < text.length ? text.codePointAt(i)! : 32;
    const size = cp > 0xffff ? 2 : 1;
    if (isWordChar(cp)) {
      if (from < 0) from = i;
    } else if (from >= 0) {
      // (A word of marks alone, such as an emoji's variation selector, is no word.)
      const lexeme = i - from <= MAX_WORD_CHARS ? lexemeOf(text.slice(from, i)) : '';
      if (lexeme) fn(lexeme);
      from = -1;
    }
    i += size;
  }
}

/** The words of a text as the index keeps them, in order. */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  eachWord(text, (w) => out.push(w));
  return out;
}

/** Words met lately and their lexemes: most of a page's words are words it used before. */
const known = new Map<string, string>();
const KNOWN = 50_000;

function lexemeOf(word: string): string {
  let lexeme = known.get(word);
  if (lexeme === undefined) {
    if (known.size >= KNOWN) known.clear();
    known.set(word, (lexeme = stemmed(word)));
  }
  return lexeme;
}

function stemmed(word: string): string {
  let w = word.toLowerCase();
  if (!ASCII_LETTERS.test(w)) {
    w = w.normalize('NFD').replace(MARKS, '').normalize('NFC');
    if (!ASCII_LETTERS.test(w)) return w;
  }
  return stem(w);
}

/** The tsvector literal of a document: title words weighted A, then the body's weighted B. */
export function tsvectorOf(title: string, body: string): string {
  // Each lexeme's positions as the literal writes them, and how many.
  const positions = new Map<string, { text: string; n: number }>();
  let position = 0;
  let bytes = 0;
  let weight = 'A';
  const add = (w: string) => {
    position = Math.min(position + 1, MAX_POSITION);
    const at = positions.get(w);
    if (!at) {
      // What PostgreSQL counts of a lexeme: its bytes (to an even number), its positions' count,
      // and two bytes a position.
      const size = Buffer.byteLength(w);
      const cost = size + (size & 1) + 4;
      if (size > MAX_LEXEME_BYTES || bytes + cost > MAX_VECTOR_BYTES) return;
      bytes += cost;
      positions.set(w, { text: `${position}${weight}`, n: 1 });
    } else if (at.n < MAX_POSITIONS && bytes + 2 <= MAX_VECTOR_BYTES) {
      bytes += 2;
      at.text += `,${position}${weight}`;
      at.n++;
    }
  };
  eachWord(title, add);
  weight = 'B';
  eachWord(body, add);
  // A lexeme is letters, digits and marks: nothing in it needs escaping.
  const out: string[] = [];
  for (const [w, at] of positions) out.push(`'${w}':${at.text}`);
  return out.join(' ');
}

/** The tsquery literal that asks for every one of `words` (none: undefined). */
export function tsqueryOf(words: string[]): string | undefined {
  const lexemes = [...new Set(words.flatMap((w) => wordsOf(w)))];
  return lexemes.length > 0 ? lexemes.map((w) => `'${w}'`).join(' & ') : undefined;
}
