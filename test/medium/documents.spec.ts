import {
  DocumentError,
  DocumentParser,
  MAX_PAGE_RANGES,
  pageRangesError,
  parsePageRanges,
  type ParsedDocument,
} from '../../src/documents';
import { selectPages } from '../../src/documents/page-select';
import { SiftError } from '../../src/common/errors';
import {
  ARABIC,
  CHINESE,
  GREEK,
  chinese,
  greekAndArabic,
  headings,
  indentsAndLetters,
  manyPages,
  markupInText,
  onePage,
  scan,
  table,
  twoColumns,
  withMetadata,
} from '../support/pdf-documents';
import { pageKind } from '../../src/fetch/decode';
import { watchReading } from '../support/parser-watch';
import { waitUntil } from '../support/wait';

/**
 * Documents made at test time, read by real parser processes: what comes out in each format,
 * the metadata, page ranges and caps, and how the processes are shared.
 */

const OPTS = { maxPages: 500, maxMb: 256, deadlineMs: 30_000 };
const markers = (md: string) => [...md.matchAll(/^<!-- page (\d+) -->$/gm)].map((m) => Number(m[1]));

let parser: DocumentParser;
beforeAll(() => {
  parser = new DocumentParser({ processes: 1 });
});
afterAll(() => parser.close());

describe('what a document becomes', () => {
  it('one page: a heading, paragraphs split at the gap, a hyphenated word made whole, two lists', async () => {
    const doc = await parser.parse(await onePage(), OPTS);
    expect(doc.markdown).toBe(
      [
        '<!-- page 1 -->',
        '',
        '# Annual Report',
        '',
        'The committee met four times this year and reviewed every proposal it was sent.',
        '',
        'A second paragraph follows after a gap.',
        '',
        '- first bullet point',
        '- second bullet point',
        '',
        '1. first numbered step',
        '2. second numbered step',
      ].join('\n'),
    );
    expect(doc.text).toBe(
      [
        'Annual Report',
        '',
        'The committee met four times this year and reviewed every proposal it was sent.',
        '',
        'A second paragraph follows after a gap.',
        '',
        '\u2022 first bullet point',
        '\u2022 second bullet point',
        '',
        '1. first numbered step',
        '2. second numbered step',
      ].join('\n'),
    );
    expect(doc.html).toBe(
      [
        '<section data-page="1">',
        '<h1>Annual Report</h1>',
        '<p>The committee met four times this year and reviewed every proposal it was sent.</p>',
        '<p>A second paragraph follows after a gap.</p>',
        '<ul><li>first bullet point</li><li>second bullet point</li></ul>',
        '<ol><li>first numbered step</li><li>second numbered step</li></ol>',
        '</section>',
      ].join('\n'),
    );
    expect(doc).toMatchObject({ truncated: false, hasText: true, metadata: { pages: 1 } });
  });

  it('200 pages: every page once, in order, with its marker and its heading', async () => {
    const doc = await parser.parse(await manyPages(200), OPTS);
    expect(markers(doc.markdown)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(doc.markdown.match(/^# Chapter \d+$/gm)).toHaveLength(200);
    expect(doc.text).toContain('Line 45 of page 200: the quick brown fox');
    expect(doc.text).not.toContain('<!--');
    expect(doc.html.match(/<section data-page="\d+">/g)).toHaveLength(200);
    expect(doc).toMatchObject({ truncated: false, hasText: true, metadata: { pages: 200 } });
  });

  it('headings at three sizes are #, ## and ### by size, ranked over the whole document', async () => {
    const doc = await parser.parse(await headings(), OPTS);
    expect(doc.markdown.split('\n').filter((l) => l.startsWith('#'))).toEqual([
      '# Guide to Rivers',
      '## Sources',
      '### Springs',
      '## Mouths',
    ]);
    expect(doc.html).toContain(
      '<h3>Springs</h3>\n<p>Some rivers start at springs. Water rises from the ground there.</p>',
    );
    expect(doc.text).not.toContain('#');
  });

  it('two columns come out a column at a time, never interleaved line by line', async () => {
    const doc = await parser.parse(await twoColumns(), OPTS);
    const left = Array.from({ length: 6 }, (_, i) => `Left column line ${i + 1} tells its story`);
    const right = Array.from({ length: 6 }, (_, i) => `Right column line ${i + 1} goes on apart`);
    expect(doc.text).toBe(`${left.join(' ')}\n\n${right.join(' ')}`);
  });

  it('a table keeps its rows and cells: a markdown table, tab-separated text, an html table', async () => {
    const doc = await parser.parse(await table(), OPTS);
    expect(doc.markdown).toContain(
      [
        '| Fruit | Colour | Price |',
        '| --- | --- | --- |',
        '| Apple | Red | 1.20 |',
        '| Banana | Yellow | 0.80 |',
        '| Plum | Purple | 2.10 |',
      ].join('\n'),
    );
    expect(doc.text).toContain('Fruit\tColour\tPrice\nApple\tRed\t1.20');
    expect(doc.html).toContain(
      '<table><tr><td>Fruit</td><td>Colour</td><td>Price</td></tr><tr><td>Apple</td>',
    );
  });

  it('Greek and Arabic in an embedded font, Chinese through a predefined CMap and through ToUnicode', async () => {
    const ga = await parser.parse(await greekAndArabic(), OPTS);
    expect(ga.text).toContain(GREEK);
    expect(ga.text).toContain(ARABIC);
    const zh = await parser.parse(await chinese(), OPTS);
    // Two lines of one size a line apart: one paragraph, run on without a space.
    expect(zh.text).toBe(CHINESE + CHINESE);
  });

  it('metadata: XMP before Info for title, author and description; CreationDate; /Lang', async () => {
    const both = await parser.parse(await withMetadata({ xmp: true }), OPTS);
    expect(both.metadata).toEqual({
      title: 'XMP Title & Übersicht',
      author: 'Ada Lovelace, Charles Babbage',
      description: 'XMP description',
      published_at: '2021-03-04T05:06:07.000Z',
      language: 'de-DE',
      pages: 1,
    });
    const info = await parser.parse(await withMetadata({ xmp: false }), OPTS);
    expect(info.metadata).toEqual({
      title: 'Info Title',
      author: 'Info Author',
      description: 'Info subject line',
      published_at: '2021-03-04T05:06:07.000Z',
      language: 'de-DE',
      pages: 1,
    });
  });

  it('a first-line indent starts a paragraph; a lettered list keeps its letters', async () => {
    const doc = await parser.parse(await indentsAndLetters(), OPTS);
    expect(doc.markdown).toBe(
      [
        '<!-- page 1 -->',
        '',
        'The first paragraph opens here and runs on to a second line of its own.',
        '',
        'The second paragraph is indented like the first and ends on this line.',
        '',
        '- a) apples',
        '- b) pears',
      ].join('\n'),
    );
    expect(doc.html).toContain('<ul><li>a) apples</li><li>b) pears</li></ul>');
  });

  it('a scan (pages with only an image) has no text', async () => {
    const doc = await parser.parse(await scan(2), OPTS);
    expect(doc).toMatchObject({ hasText: false, text: '', metadata: { pages: 2 } });
    expect(markers(doc.markdown)).toEqual([1, 2]);
  });

  it("text that looks like markup stays text: no marker, tag or heading of the document's own", async () => {
    const doc = await parser.parse(await markupInText(), OPTS);
    expect(markers(doc.markdown)).toEqual([1]);
    expect(doc.markdown).toContain('\\<!-- page 9 --> \\<b>bold\\</b> & "quoted"');
    expect(doc.markdown).toContain('\n\\# not a heading');
    expect(doc.html).toContain(
      '<p>&lt;!-- page 9 --&gt; &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; plain words between</p>',
    );
    expect(doc.text).toContain('<!-- page 9 --> <b>bold</b> & "quoted"');
  });
});

describe('pages, caps and truncation', () => {
  let six: Buffer;
  beforeAll(async () => {
    six = await manyPages(6);
  });

  it('pages "2-3,5" reads those pages only, with their own numbers, and says it cut', async () => {
    const doc = await parser.parse(six, { ...OPTS, pages: '2-3,5' });
    expect(markers(doc.markdown)).toEqual([2, 3, 5]);
    expect(doc.text).toContain('of page 5');
    expect(doc.text).not.toMatch(/of page [146]\b/);
    expect(doc).toMatchObject({ truncated: true, metadata: { pages: 6 } });
  });

  it('ranges past the end are clipped; ranges that cover every page do not truncate', async () => {
    expect(markers((await parser.parse(six, { ...OPTS, pages: '5-9,40' })).markdown)).toEqual([5, 6]);
    const all = await parser.parse(six, { ...OPTS, pages: '4-,1-3' });
    expect(markers(all.markdown)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(all.truncated).toBe(false);
  });

  it('maxPages cuts the document and says so', async () => {
    const doc = await parser.parse(six, { ...OPTS, maxPages: 2 });
    expect(markers(doc.markdown)).toEqual([1, 2]);
    expect(doc).toMatchObject({ truncated: true, metadata: { pages: 6 } });
  });

  it('the characters gathered are capped: the rest is cut and truncated set', async () => {
    const small = new DocumentParser({ processes: 1, maxChars: 5000 });
    try {
      const doc = await small.parse(six, OPTS);
      expect(doc.truncated).toBe(true);
      expect(doc.text.length).toBeLessThanOrEqual(5000 + 200);
      expect(doc.text.length).toBeGreaterThan(3000);
    } finally {
      await small.close();
    }
  });

  it('a million pages claimed cost no more than the cap: the page list stops at maxPages', () => {
    const started = performance.now();
    const { pages, cut } = selectPages([{ first: 1, last: 10_000_000 }], 1_000_000, 500);
    expect(pages).toHaveLength(500);
    expect(pages[499]).toBe(500);
    expect(cut).toBe(true);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('the pages option is checked: good ones parse, bad ones say what is wrong', () => {
    expect(parsePageRanges('1-5,9')).toEqual([
      { first: 1, last: 5 },
      { first: 9, last: 9 },
    ]);
    expect(parsePageRanges(' 2 - 3 , 7-')).toEqual([
      { first: 2, last: 3 },
      { first: 7, last: undefined },
    ]);
    expect(pageRangesError('0')).toBe('"0": pages count from 1');
    expect(pageRangesError('5-2')).toBe('"5-2": the range ends before it starts');
    expect(pageRangesError('abc')).toBe('"abc" is not a page number or a range like 3-7');
    expect(pageRangesError('')).toBe('is empty');
    expect(pageRangesError('1,,2')).toBe('"" is not a page number or a range like 3-7');
    const many = Array.from({ length: MAX_PAGE_RANGES + 1 }, (_, i) => String(i + 1)).join(',');
    expect(pageRangesError(many)).toBe('has 101 ranges; at most 100 are allowed');
    expect(
      pageRangesError(Array.from({ length: MAX_PAGE_RANGES }, (_, i) => i + 1).join(',')),
    ).toBeUndefined();
  });

  it('parse with a bad pages option fails 400 invalid_request before any work', async () => {
    const err = await parser.parse(six, { ...OPTS, pages: '5-2' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiftError);
    expect(err).toMatchObject({
      status: 400,
      code: 'invalid_request',
      message: 'pages: "5-2": the range ends before it starts',
    });
  });
});

describe('what is a PDF', () => {
  const pdf = Buffer.from('%PDF-1.7\n');
  const isPdf = (type: string, body: Buffer) => pageKind(type, body) === 'pdf';
  it('application/pdf whatever the body; a %PDF- body whatever the type', () => {
    expect(isPdf('application/pdf', Buffer.from('?'))).toBe(true);
    expect(isPdf('Application/PDF; charset=binary', Buffer.alloc(0))).toBe(true);
    expect(isPdf('application/octet-stream', pdf)).toBe(true);
    expect(isPdf('', pdf)).toBe(true);
    expect(isPdf('text/html', pdf)).toBe(true);
    expect(isPdf('text/html', Buffer.from('<html>%PDF-'))).toBe(false);
    expect(isPdf('application/octet-stream', Buffer.from('%PDF'))).toBe(false);
  });
});

describe('parser processes', () => {
  const until = async (p: Promise<ParsedDocument>) => p.catch((e: DocumentError) => e);

  it('one warm process reads document after document; after documentsPerProcess its successor starts as it reads on', async () => {
    const p = new DocumentParser({ processes: 1, documentsPerProcess: 2 });
    try {
      const doc = await onePage();
      await p.parse(doc, OPTS);
      const [first] = p.processes();
      expect(first).toBeDefined();
      await p.parse(doc, OPTS);
      // Worn: its successor is starting, and it reads the next document meanwhile, at once.
      const both = p.processes();
      expect(both).toHaveLength(2);
      expect(both[0]).toBe(first);
      const second = both[1];
      await p.parse(doc, OPTS);
      // Once the successor is ready, the first ends, and the successor reads.
      await waitUntil(
        () => (p.processes().includes(first) ? undefined : true),
        () => `the first process to end (${p.processes().join(', ')})`,
      );
      expect(p.processes()).toEqual([second]);
      await p.parse(doc, OPTS);
      expect(p.processes()).toEqual([second]);
    } finally {
      await p.close();
    }
  });

  it('a successor that does not start: the worn process ends all the same, and the next document starts one', async () => {
    const p = new DocumentParser({ processes: 1, documentsPerProcess: 1 });
    try {
      const doc = await onePage();
      await p.parse(doc, OPTS);
      const [first] = p.processes();
      // Its successor starts; killed before it is ready, it never is.
      const successor = p.processes().find((pid) => pid !== first)!;
      expect(successor).toBeDefined();
      process.kill(successor, 'SIGKILL');
      await waitUntil(
        () => (p.processes().length === 0 ? true : undefined),
        () => `both processes to end (${p.processes().join(', ')})`,
      );
      // Both gone: the next document starts a process of its own and is read.
      const d = await p.parse(doc, OPTS);
      expect(d.markdown).toContain('# Annual Report');
      expect(p.processes()).toHaveLength(2); // the new one, worn at once, and its successor
      expect(p.processes()).not.toContain(first);
    } finally {
      await p.close();
    }
  });

  it('documents at once beyond the processes wait their turn; no more processes than allowed', async () => {
    const p = new DocumentParser({ processes: 2 });
    try {
      const doc = await manyPages(20);
      let most = 0;
      const sampler = setInterval(() => (most = Math.max(most, p.processes().length)), 10);
      const docs = await Promise.all(Array.from({ length: 5 }, () => p.parse(doc, OPTS)));
      clearInterval(sampler);
      for (const d of docs) expect(markers(d.markdown)).toHaveLength(20);
      expect(most).toBe(2);
    } finally {
      await p.close();
    }
  });

  it('time out waiting for a parser: timeout; time out while parsing: document_too_complex', async () => {
    const p = new DocumentParser({ processes: 1 });
    try {
      const big = await manyPages(200);
      await p.parse(await onePage(), OPTS); // warm
      const slow = p.parse(big, OPTS);
      const waiting = await until(p.parse(big, { ...OPTS, deadlineMs: 100 }));
      expect(waiting).toMatchObject({ code: 'timeout', status: 504, failure: 'queued' });
      await slow;
      const started = Date.now();
      const cut = await until(p.parse(big, { ...OPTS, deadlineMs: 300 }));
      expect(cut).toMatchObject({ code: 'document_too_complex', status: 502, failure: 'deadline' });
      expect(Date.now() - started).toBeLessThan(2000);
      expect((await p.parse(await onePage(), OPTS)).hasText).toBe(true);
    } finally {
      await p.close();
    }
  });

  it('an aborted parse rejects with the reason and ends its process; the next parse works', async () => {
    const p = new DocumentParser({ processes: 1 });
    const watch = watchReading();
    try {
      await p.parse(await onePage(), OPTS);
      const [pid] = p.processes();
      const ac = new AbortController();
      const running = until(p.parse(await manyPages(200), { ...OPTS, signal: ac.signal }));
      await waitUntil(() => (watch.reading().includes(pid) ? true : undefined), 'the parser to read a page');
      ac.abort(new Error('caller went away'));
      expect(await running).toMatchObject({ message: 'caller went away' });
      expect((await p.parse(await onePage(), OPTS)).hasText).toBe(true);
      expect(p.processes()).not.toContain(pid);
    } finally {
      watch.restore();
      await p.close();
    }
  });
});
