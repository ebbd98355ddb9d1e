import { encode } from '../support/o200k';
import {
  countTokens,
  cutToTokens,
  MAX_RUN,
  mayHaveLongRun,
  tailOfTokens,
  tokenTable,
  TOKENIZER,
} from '../../src/common/tokens';
import { prng } from '../support/prng';
import { chunksOf } from '../../src/pages/chunks';

/** The library's own count, special-token spellings read as text. */
const theirs = (s: string) => encode(s).length;

const MIXED = 'héllo wörld — 日本語のテキスト, ελληνικά και 😀 emoji.\n\n| a | b |\n|---|---|\n';

describe('tokens: o200k_base counts and cuts', () => {
  it("counts as the library does, a special token's spelling as text, and names its encoding", () => {
    expect(TOKENIZER).toBe('o200k_base');
    for (const s of ['', 'a', MIXED, MIXED.repeat(50), 'say <|endoftext|> then <|im_start|>'])
      expect(countTokens(s)).toBe(theirs(s));
  });

  it('counts as the library does across more distinct pieces than it keeps, long pieces and parts included', () => {
    // Made-up words, most of them several tokens each: the kept counts fill and are forgotten
    // several times over; words over 64 characters are counted each time; a part over 256 KB is
    // split a piece at a time.
    const rand = prng(7);
    const letters = 'abcdefghijklmnopqrstuvwxyzéöß日本';
    const word = (n: number) =>
      Array.from({ length: n }, () => letters[Math.floor(rand() * letters.length)]).join('');
    const words = Array.from({ length: 17_000 }, (_, i) => word(3 + (i % 11))).join(' ');
    const texts = [words, `${words} ${words} ${word(200)} ${word(65)}`];
    expect(texts[1].length).toBeGreaterThan(256 * 1024);
    for (const t of texts) expect(countTokens(`${t} `)).toBe(theirs(`${t} `));
  });

  it('a cut keeps at most the tokens asked, is a prefix, and never halves a character', () => {
    const text = MIXED.repeat(40);
    for (const max of [1, 2, 3, 7, 50, 333]) {
      const cut = cutToTokens(text, max);
      expect(cut.truncated).toBe(true);
      expect(cut.tokens).toBeLessThanOrEqual(max);
      expect(cut.tokens).toBe(theirs(cut.text));
      expect(text.startsWith(cut.text)).toBe(true);
      expect(cut.text).not.toMatch(/\uFFFD|[\uD800-\uDBFF]$/);
      // Within a few tokens of the bound: a cut is not far shorter than asked.
      expect(cut.tokens).toBeGreaterThanOrEqual(max - 3);
    }
    expect(cutToTokens('short', 10)).toEqual({ text: 'short', tokens: 1, truncated: false });
  });

  it('a word or a run of spaces of 200 KB is counted and cut in linear time, a window at a time', () => {
    // Merged whole, each would take the library minutes (its merges grow with the square of a word).
    for (const text of ['a'.repeat(200_000), ' '.repeat(200_000), `x${'日本'.repeat(100_000)}`]) {
      const n = countTokens(text);
      expect(n).toBeGreaterThan(0);
      const cut = cutToTokens(text, 50);
      expect(cut.tokens).toBeLessThanOrEqual(50);
      expect(text.startsWith(cut.text)).toBe(true);
    }
    // Ordinary text with a long run inside: the rest counts exactly as the library does.
    const around = `${MIXED}${'b'.repeat(5000)}${MIXED}`;
    expect(Math.abs(countTokens(around) - theirs(around))).toBeLessThanOrEqual(5);
  });

  it('finds every run of spaces or of other characters long enough to be counted in windows', () => {
    // Looked at every character: the longest run of spaces or of other characters.
    const longest = (t: string) => {
      let best = 0;
      let run = 0;
      for (let i = 0; i < t.length; i++) {
        run = i > 0 && /\s/.test(t[i]) === /\s/.test(t[i - 1]) ? run + 1 : 1;
        best = Math.max(best, run);
      }
      return best;
    };
    const rand = prng(3);
    let found = 0;
    for (let i = 0; i < 300; i++) {
      // Runs just under and just over the window, beginning anywhere.
      const at = Math.floor(rand() * 1600);
      const len = MAX_RUN - 3 + Math.floor(rand() * 8);
      const run = (rand() < 0.5 ? 'q' : '\n').repeat(len);
      const text = `${'ab '.repeat(at).slice(0, at)} ${run} cd${' e'.repeat(Math.floor(rand() * 900))}`;
      if (longest(text) < MAX_RUN) continue;
      found++;
      expect([at, len, mayHaveLongRun(text)]).toEqual([at, len, true]);
    }
    expect(found).toBeGreaterThan(100);
    // Ordinary text is not looked at further.
    expect(mayHaveLongRun(MIXED.repeat(100))).toBe(false);
  });

  it('cuts one after another hold their length: nothing of one cut reaches the next', () => {
    const text = 'ünïcödé 日本語 😀 '.repeat(300);
    for (let i = 0; i < 20; i++) {
      const max = 7 + ((i * 13) % 90);
      const cut = cutToTokens(text, max);
      expect([max, cut.tokens >= max - 3, cut.tokens <= max]).toEqual([max, true, true]);
    }
  });

  it("a tail is the text's end in at most about n tokens, whole characters", () => {
    const text = MIXED.repeat(3);
    const tail = tailOfTokens(text, 5);
    expect(text.endsWith(tail)).toBe(true);
    expect(tail.length).toBeGreaterThan(0);
    expect(theirs(tail)).toBeLessThanOrEqual(6);
    expect(tailOfTokens('abc', 10)).toBe('abc');
    expect(tailOfTokens('abc', 0)).toBe('');
  });
});

/** A page of three heading levels with sections long enough to be split. */
function docsPage(): string {
  const para = (k: number) => `Paragraph ${k} says something about the section it is in, at some length.\n\n`;
  const body = (n: number) => Array.from({ length: n }, (_, k) => para(k)).join('');
  return (
    'Lead text before any heading.\n\n' +
    `# Guide\n\n${body(2)}` +
    `## Install\n\n${body(60)}` +
    '### On Linux\n\n```sh\n# not a heading: inside a fence\napt-get install sift\n\n```\n\n' +
    `### On macOS #\n\n${body(3)}` +
    `## Use\n\nOne ${'very '.repeat(900)}long line.\n`
  );
}

/**
 * Markdown made to meet tokens where parts of it join: a line ending in punctuation before one
 * beginning with a slash (the split's punctuation piece takes line ends and slashes after it),
 * lines of spaces between paragraphs, runs of spaces and letters over a thousand, digits, scripts.
 */
function joinsMarkdown(seed: number): string {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const bits = [
    'plain words go here',
    'end of it.\n/path/next',
    'x.\n\n/after a blank',
    '   \n  \n',
    '\t5 digits 12345',
    'x   12   34\u2003\u20035',
    MIXED,
    ' '.repeat(1100),
    'z'.repeat(1030),
    '```\n# not a heading\n```',
    "it's what they'll say",
  ];
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    if (rnd() < 0.08) lines.push(`${'#'.repeat(1 + Math.floor(rnd() * 3))} Heading ${i}`);
    lines.push(
      Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick(bits)).join(pick([' ', '', '\n'])),
    );
    lines.push(pick(['', '', ' ', '\n']));
  }
  return lines.join('\n');
}

describe('token tables: a text counted once, its parts read from it', () => {
  it('count as the library does, and a part between two of its offsets as the library counts that part', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const md = joinsMarkdown(seed);
      // Counted before the table is made: a count of the text last made a table of is the table's.
      const whole = countTokens(md);
      const table = tokenTable(md);
      expect(table.tokens).toBe(whole);
      expect(countTokens(md)).toBe(whole);
      const rnd = prng(seed * 7);
      // The offset at or after i where a piece begins.
      const offsetFrom = (i: number) => {
        while (table.between(i, i) === undefined) i++;
        return i;
      };
      let missed = 0;
      for (let k = 0; k < 200; k++) {
        const at = Math.floor(rnd() * md.length);
        if (table.between(at, at) === undefined) missed++;
        const a = offsetFrom(at);
        const b = offsetFrom(Math.min(md.length, a + Math.floor(rnd() * 3000)));
        expect([a, b, table.between(a, b)]).toEqual([a, b, countTokens(md.slice(a, b))]);
      }
      // Inside a piece is not an offset of the table.
      expect(missed).toBeGreaterThan(50);
    }
  });

  it("an offset at each line's start and at the text's end, none inside a line", () => {
    const line = `${'1,'.repeat(300)}\n`;
    const text = `${line.repeat(17)}and a last line`;
    const table = tokenTable(text);
    expect(table.tokens).toBe(theirs(text));
    for (let at = 0; at < text.length; at += line.length)
      expect([at, table.between(0, at)]).toEqual([at, theirs(text.slice(0, at))]);
    expect(table.between(0, text.length)).toBe(theirs(text));
    // Pieces end inside a line ("1", ","), but the table keeps no offset there.
    for (const at of [1, 2, 3, 777, text.length - 1]) expect(table.between(0, at)).toBeUndefined();
  });

  it('no offset where a part alone reads differently: runs of spaces, line ends of each kind', () => {
    const text = 'x   12 and\u2003\u2003\u20037\n  \n\t\n.\n \nx\r\n\r\ny \u3000\n\u2028\nz\n\n';
    const table = tokenTable(text);
    let offsets = 0;
    for (let a = 0; a <= text.length; a++)
      for (let b = a; b <= text.length; b++) {
        const n = table.between(a, b);
        if (n === undefined) continue;
        offsets++;
        expect([a, b, n]).toEqual([a, b, countTokens(text.slice(a, b))]);
      }
    // Some pairs of offsets were read, and "x", "  ", " ", "12": inside a line, not an end.
    expect(offsets).toBeGreaterThan(20);
    expect(table.between(0, 4)).toBeUndefined();
  });

  it("every chunk's tokens are the library's count of its text, at most chunk_tokens", () => {
    for (let seed = 1; seed <= 3; seed++) {
      const md = joinsMarkdown(seed);
      for (const size of [64, 512]) {
        const chunks = chunksOf(md, { tokens: size, overlap: 0 });
        expect(chunks.map((c) => c.text).join('')).toBe(md);
        for (const c of chunks) {
          expect(c.tokens).toBe(countTokens(c.text));
          expect(c.tokens).toBeLessThanOrEqual(size);
        }
      }
    }
  });
});

describe('chunks: the markdown in pieces by heading', () => {
  it('each at most chunk_tokens, joined the whole markdown, with the right heading paths', () => {
    const md = docsPage();
    const chunks = chunksOf(md, { tokens: 200, overlap: 0 });
    expect(chunks.map((c) => c.text).join('')).toBe(md);
    for (const c of chunks) {
      expect(c.tokens).toBe(theirs(c.text));
      expect(c.tokens).toBeLessThanOrEqual(200);
    }
    const paths = [...new Set(chunks.map((c) => c.heading_path.join(' > ')))];
    expect(paths).toEqual([
      '',
      'Guide',
      'Guide > Install',
      'Guide > Install > On Linux',
      'Guide > Install > On macOS',
      'Guide > Use',
    ]);
    // The fenced "# …" line stays in its section; a long section is several pieces.
    expect(chunks.find((c) => c.text.includes('not a heading'))!.heading_path).toEqual([
      'Guide',
      'Install',
      'On Linux',
    ]);
    expect(chunks.filter((c) => c.heading_path.join() === 'Guide,Install').length).toBeGreaterThan(3);
    expect(chunks.filter((c) => c.heading_path.join() === 'Guide,Use').length).toBeGreaterThan(3);
  });

  it('ids are the same for the same page, distinct within it, and follow the text', () => {
    const md = docsPage();
    const a = chunksOf(md, { tokens: 200, overlap: 0 });
    const b = chunksOf(md, { tokens: 200, overlap: 0 });
    expect(b.map((c) => c.id)).toEqual(a.map((c) => c.id));
    expect(new Set(a.map((c) => c.id)).size).toBe(a.length);
    // A change in one section leaves the other sections' ids as they were.
    const changed = chunksOf(md.replace('Lead text', 'Other lead text'), { tokens: 200, overlap: 0 });
    expect(changed[0].id).not.toBe(a[0].id);
    expect(changed.slice(1).map((c) => c.id)).toEqual(a.slice(1).map((c) => c.id));
    // Repeated text under the same headings still gets distinct ids.
    const twice = chunksOf('# X\n\n' + 'same\n\n'.repeat(400), { tokens: 50, overlap: 0 });
    expect(new Set(twice.map((c) => c.id)).size).toBe(twice.length);
  });

  it('with overlap a piece begins with the end of the one before in its section, still within chunk_tokens', () => {
    const md = docsPage();
    const chunks = chunksOf(md, { tokens: 200, overlap: 40 });
    const install = chunks.filter((c) => c.heading_path.join() === 'Guide,Install');
    for (const c of chunks) expect(c.tokens).toBeLessThanOrEqual(200);
    for (let i = 1; i < install.length; i++) {
      const prev = install[i - 1].text;
      // Some text from the end of the piece before begins this one.
      const shared = [...Array(prev.length).keys()].find((k) => install[i].text.startsWith(prev.slice(k)));
      expect(shared).toBeDefined();
      expect(prev.length - shared!).toBeGreaterThan(20);
    }
    // The first piece of each section has nothing before it.
    expect(chunks.find((c) => c.heading_path.join() === 'Guide,Use')!.text.startsWith('## Use')).toBe(true);
  });

  it('a line of 500 KB is cut into pieces without reading it again whole for each', () => {
    const line = 'word🦊 and 12345 more, '.repeat(22_000);
    const chunks = chunksOf(line, { tokens: 64, overlap: 0 });
    expect(chunks.map((c) => c.text).join('')).toBe(line);
    expect(Math.max(...chunks.map((c) => c.tokens))).toBeLessThanOrEqual(64);
    expect(chunks.every((c) => !/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(c.text))).toBe(true);
  });

  it('a hostile heading line is read in linear time; a heading in a path is at most 200 characters', () => {
    const line = `#${' '.repeat(20_000)}\rx\n`;
    const chunks = chunksOf(`${line}text\n`, { tokens: 512, overlap: 0 });
    expect(chunks.map((c) => c.text).join('')).toBe(`${line}text\n`);
    const long = chunksOf(`# ${'H'.repeat(100_000)}\n\nbody\n`, { tokens: 512, overlap: 0 });
    expect(long[long.length - 1].heading_path[0]).toHaveLength(200);
    // Closing #s are not the heading's; a # alone is an empty heading; #5 is not a heading.
    const paths = chunksOf('# A ##\n\nx\n#\n\ny\n#5 z\n', { tokens: 512, overlap: 0 }).map(
      (c) => c.heading_path,
    );
    expect(paths).toEqual([['A'], ['']]);
  });

  it('an empty page has no pieces; a page without headings has them under []', () => {
    expect(chunksOf('', { tokens: 512, overlap: 0 })).toEqual([]);
    const plain = chunksOf('just text\n', { tokens: 512, overlap: 0 });
    expect(plain).toEqual([{ id: expect.any(String), heading_path: [], text: 'just text\n', tokens: 3 }]);
  });
});
