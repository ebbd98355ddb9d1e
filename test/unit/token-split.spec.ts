import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/cjs/encodingParams/constants';
import { PieceCounts, pieceHash } from '../../src/common/piece-counts';
import { pieceEnd, pieceReader } from '../../src/common/token-split';
import { prng } from '../support/prng';

/** The library's split: its regex over the whole text. */
const theirs = (t: string): string[] => t.match(new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu')) ?? [];

const reader = pieceReader(O200K_TOKEN_SPLIT_REGEX);
const ours = (t: string): string[] => {
  const out: string[] = [];
  for (let p = 0; p < t.length;) {
    const e = pieceEnd(t, p, reader);
    out.push(t.slice(p, e));
    p = e;
  }
  return out;
};

/**
 * Characters where the regex's alternatives meet: each class of ASCII, the letters and line ends
 * its contractions and slashes name, and characters above ASCII of each class (letters of each
 * case, a mark, digits, spaces, punctuation, a surrogate pair).
 */
const EDGES = [
  ...'aZsSdDtTmMlLvVeErR09 \t\n\r\v\f\'"/.-,!(_#*|`~\x00\x7f',
  ...['é', 'É', 'ǅ', 'ʰ', '中', '\u0301', '²', '٣', '\u00a0', '\u2028', '\u3000', '\ufeff', '—', '😀', '…'],
];

describe('the token split: read where each piece ends', () => {
  it('gives the library regex’s pieces on made-up texts of every class of character', () => {
    const rand = prng(55);
    for (let n = 0; n < 20_000; n++) {
      const len = Math.floor(rand() * 40);
      const t = Array.from({ length: len }, () => EDGES[Math.floor(rand() * EDGES.length)]).join('');
      expect([t, ours(t)]).toEqual([t, theirs(t)]);
    }
  });

  it('gives the library regex’s pieces on prose, markdown and code in several scripts', () => {
    const texts = [
      "It's the DON'T-stop 'LL we've they'RE I'm she'd 1234567 3.14159 -- a/b//c\r\n\r\n  x\n\t\ty",
      '# Title\n\n## Sub *emph* **bold** [link](https://example.com/a/b?c=d#e)\n\n```ts\nconst x = 1;\n```\n',
      '| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n>   more   \n\n- item\n   - nested\n',
      'Ünïcödé café naïve résumé — “quotes” ‘single’ … 日本語のテキスト、中文。Ελληνικά κείμενα και 😀👍🏽 emoji.',
      'Привет, мир! ١٢٣ ٤٥٦ مرحبا بالعالم  हिन्दी पाठ   ',
      '   leading and trailing   ',
      '\n\n\n',
      'trailing line end\n',
      'ABCdef GHI jkl MNOpQR stUV 1a2b3c ___ *** /// ...\n/',
    ];
    for (const t of texts) expect(ours(t)).toEqual(theirs(t));
  });
});

describe('counts of pieces kept: found by their characters where they are', () => {
  /** A count that tells pieces apart (a number of each piece's own), and how often each was made. */
  const counted = () => {
    const made = new Map<string, number>();
    const numbers = new Map<string, number>();
    const expected = (s: string) => {
      if (!numbers.has(s)) numbers.set(s, numbers.size + 1);
      return numbers.get(s)!;
    };
    const counts = new PieceCounts((piece) => {
      made.set(piece, (made.get(piece) ?? 0) + 1);
      return expected(piece);
    });
    return { made, counts, expected };
  };

  it('two pieces of one hash and length keep their own counts', () => {
    // Two made-up words of seven letters (one above ASCII: kept as strings) with the same hash,
    // found by trying.
    const rand = prng(3);
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    while (!pair) {
      const w = `é${Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('')}`;
      const h = pieceHash(w, 0, w.length);
      const other = seen.get(h);
      if (other !== undefined && other !== w) pair = [other, w];
      seen.set(h, w);
    }
    const { made, counts, expected } = counted();
    const text = `x${pair[0]} ${pair[1]}y`;
    for (let round = 0; round < 3; round++) {
      expect(counts.at(text, 1, 8)).toBe(expected(pair[0]));
      expect(counts.at(text, 9, 16)).toBe(expected(pair[1]));
    }
    expect([made.get(pair[0]), made.get(pair[1])]).toEqual([1, 1]);
  });

  it('pieces that differ only in their last characters keep their own counts', () => {
    // Each packed number in turn: the same first 8 (or 4) characters, then 4 of every ASCII code.
    const rand = prng(12);
    const { counts, expected } = counted();
    for (const head of ['abcdefgh', 'abcd', '']) {
      const words = Array.from({ length: 3000 }, () =>
        Array.from({ length: 4 }, () => String.fromCharCode(Math.floor(rand() * 128))).join(''),
      ).map((tail) => head + tail);
      for (const w of [...words, ...words])
        expect([w, counts.at(` ${w} `, 1, w.length + 1)]).toEqual([w, expected(w)]);
    }
  });

  it('forgets all at once when full, and counts right before and after; long pieces apart', () => {
    const rand = prng(9);
    const { made, counts, expected } = counted();
    // Words of 1 to 16 characters of every ASCII code, and some above it: both tables fill.
    const words = Array.from({ length: 60_000 }, () =>
      Array.from({ length: 1 + Math.floor(rand() * 16) }, () =>
        String.fromCharCode(rand() < 0.02 ? 0xe9 : Math.floor(rand() * 128)),
      ).join(''),
    );
    const long = 'w'.repeat(65);
    for (const w of [...words, ...words.slice(0, 100), long, long])
      expect(counts.at(`(${w})`, 1, w.length + 1)).toBe(expected(w));
    expect(made.get(long)).toBe(1);
  });
});
