/**
 * o200k_base's split of a text into pieces (the library's regex, below), read where each piece
 * ends. Pieces of ASCII characters (nearly all of English text and of any markdown's syntax) are
 * read by a scan of char codes that follows the regex exactly; a piece whose end depends on a
 * character above ASCII is read by the regex itself, from where the scan stopped. The regex:
 *
 *   1. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+('s|'d|…)?
 *   2. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*('s|'d|…)?
 *   3. \p{N}{1,3}
 *   4.  ?[^\s\p{L}\p{N}]+[\r\n/]*
 *   5. \s*[\r\n]+
 *   6. \s+(?!\S)
 *   7. \s+
 *
 * Its pieces cover the text, one after another, so a piece read either way begins where the last
 * ended. The scan makes no list of pieces and no string of each: with the counts kept by where
 * the pieces are (piece-counts.ts), a count of the corpus's texts takes 0.6 of the time.
 */
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
/** \t, \v, \f and the space: what `\s` matches in ASCII, line ends aside. */
const SPACE = 4;
/** \r and \n. */
const EOL = 5;
/** Anything else in ASCII: `[^\s\p{L}\p{N}]`. */
const OTHER = 0;
/** Past the text's end. */
const END = 6;
/** A character above ASCII: the scan cannot tell its class, the regex reads the piece. */
const ABOVE = -1;

const CLASS = new Int8Array(128);
for (let c = 0; c < 128; c++) {
  CLASS[c] =
    c >= 97 && c <= 122
      ? LOWER
      : c >= 65 && c <= 90
        ? UPPER
        : c >= 48 && c <= 57
          ? DIGIT
          : c === 10 || c === 13
            ? EOL
            : c === 9 || c === 11 || c === 12 || c === 32
              ? SPACE
              : OTHER;
}

const classAt = (t: string, i: number): number => {
  if (i >= t.length) return END;
  const c = t.charCodeAt(i);
  return c < 128 ? CLASS[c] : ABOVE;
};

/** The end of a contraction (`'s`, `'LL`, …) at i, or i. */
function contraction(t: string, i: number): number {
  if (t.charCodeAt(i) !== 39) return i;
  const a = t.charCodeAt(i + 1) | 32;
  if (a === 115 || a === 100 || a === 109 || a === 116) return i + 2; // s d m t
  const b = t.charCodeAt(i + 2) | 32;
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return i + 3; // ll ve re
  return i;
}

/** The end of the piece that begins at p, read by the scan, or -1 when a character above ASCII decides it. */
function scannedEnd(t: string, p: number): number {
  const first = classAt(t, p);
  if (first === ABOVE) return -1;
  let k: number;
  // 1 and 2: letters, after one character of [^\r\n\p{L}\p{N}] or none.
  if (first === LOWER || first === UPPER || first === OTHER || first === SPACE) {
    const q = first === LOWER || first === UPPER ? p : p + 1;
    let i = q;
    while ((k = classAt(t, i)) === UPPER) i++;
    if (k === ABOVE) return -1;
    while ((k = classAt(t, i)) === LOWER) i++;
    if (k === ABOVE) return -1;
    // Capitals then small letters (1), or capitals alone (2).
    if (i > q) return contraction(t, i);
  }
  // 3: up to three digits.
  if (first === DIGIT) {
    let i = p + 1;
    while (i < p + 3 && (k = classAt(t, i)) === DIGIT) i++;
    if (i < p + 3 && classAt(t, i) === ABOVE) return -1;
    return i;
  }
  // 4: other characters, after a space or none, then line ends and slashes.
  let i = t.charCodeAt(p) === 32 && classAt(t, p + 1) === OTHER ? p + 1 : p;
  if (classAt(t, i) === OTHER) {
    while ((k = classAt(t, i)) === OTHER) i++;
    if (k === ABOVE) return -1;
    for (let c = t.charCodeAt(i); c === 10 || c === 13 || c === 47; c = t.charCodeAt(++i));
    return i;
  }
  // 5, 6 and 7: a run of spaces, to its last line end if it has one.
  let w = p;
  let eol = -1;
  while ((k = classAt(t, w)) === SPACE || k === EOL) {
    if (k === EOL) eol = w;
    w++;
  }
  if (k === ABOVE) return -1;
  if (eol >= 0) return eol + 1;
  if (w === t.length || w - p === 1) return w;
  return w - 1;
}

/** The split's regex, reading one piece where it is set to begin. */
export type PieceReader = RegExp;

/** A reader of single pieces for `split` (the library's regex): the same pattern, sticky. */
export const pieceReader = (split: RegExp): PieceReader => new RegExp(split.source, 'uy');

/** The end of the piece of `t` that begins at p (p < t.length). */
export function pieceEnd(t: string, p: number, reader: PieceReader): number {
  const e = scannedEnd(t, p);
  if (e >= 0) return e;
  reader.lastIndex = p;
  const m = reader.exec(t);
  // Every character begins some piece; a failed read would be a split unlike the library's.
  if (m === null || m[0].length === 0) throw new Error(`the token split read nothing at ${p}`);
  return p + m[0].length;
}
