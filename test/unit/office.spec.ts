import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Document, LevelFormat, Packer, Paragraph } from 'docx';
import { readCsvFile, readOffice, readRtfFile } from '../../src/documents/office/office-reader';
import { MAX_COLUMNS, MAX_ROWS } from '../../src/documents/office/xlsx';
import { shapeOfCode } from '../../src/documents/office/xlsx-dates';
import { ReadFailure } from '../../src/documents/read-failure';
import { parsePageRanges } from '../../src/documents/page-ranges';
import { pagesKept } from '../../src/documents/image-reader';
import {
  BILLION_LAUGHS,
  bigSheet,
  datedWorkbook,
  deck,
  epubFile,
  externalEntity,
  odpFile,
  odsFile,
  odsOf,
  odtFile,
  plainWord,
  repeatedCells,
  rtfFile,
  wordBomb,
  wordFile,
  wordWithXml,
  workbook,
  zipOf,
} from '../support/office-files';

/** How reading failed: its kind and message. */
function failure(read: () => unknown): { kind: string; message: string } {
  try {
    read();
  } catch (err) {
    if (err instanceof ReadFailure) return { kind: err.kind, message: err.message };
    throw err;
  }
  throw new Error('it was read');
}

describe('Office files read into the three formats', () => {
  it("markdown's own characters in a document's text are escaped, underscores only where they would mark", () => {
    const d = readOffice(
      plainWord('snake_case, _emphasis_, a*b, [link], `code`, &lt;b&gt; and 2 &lt; 3, naïve_ü and x_1'),
      1000,
    );
    expect(d.markdown).toBe(
      'snake_case, \\_emphasis\\_, a\\*b, \\[link\\], \\`code\\`, \\<b> and 2 < 3, naïve_ü and x_1',
    );
    expect(d.text).toBe('snake_case, _emphasis_, a*b, [link], `code`, <b> and 2 < 3, naïve_ü and x_1');
  });

  it('a Word file: headings at three levels, a nested list, a merged table, non-Latin text, its properties', async () => {
    const d = readOffice(await wordFile(), 1_000_000);
    expect(d.family).toBe('docx');
    expect([d.hasText, d.truncated]).toEqual([true, false]);
    expect(d.markdown).toBe(
      [
        '# Field Report',
        'The survey covered three valleys over the spring.',
        '## Methods',
        '### Sampling',
        '- Walk the transect\n   - Count the nests\n1. Weigh the samples\n2. Record the weights',
        'Ελληνικά κείμενα και 日本語のテキスト.',
        '| Valley | Nests | Notes |\n| --- | --- | --- |\n| North and South |  | Merged down |\n| East | 12 |  |',
      ].join('\n\n'),
    );
    expect(d.html).toContain('<h3>Sampling</h3>');
    expect(d.html).toContain('<ul><li>Walk the transect<ul><li>Count the nests</li></ul></li></ul>');
    expect(d.html).toContain('<ol><li>Weigh the samples</li><li>Record the weights</li></ol>');
    expect(d.text).toContain('• Walk the transect\n  • Count the nests');
    expect(d.metadata).toMatchObject({
      title: 'Quarterly Field Report',
      author: 'Ada Lovelace',
      description: 'What the survey found',
      pages: 1,
    });
    expect(d.metadata.published_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('a workbook: each sheet a table under its name, marked; values, a formula’s result, booleans', async () => {
    const d = readOffice(await workbook(), 1_000_000);
    expect(d.family).toBe('xlsx');
    expect(d.markdown).toBe(
      [
        '<!-- sheet 1 -->',
        '# Stock',
        '| Item | Count | In stock |\n| --- | --- | --- |\n| Bolts | 120 | TRUE |\n| Nuts | 80 | FALSE |\n|  | 200 |  |',
        '<!-- sheet 2 -->',
        '# Суппліери',
        '| Name | City |\n| --- | --- |\n| Acme | Kyiv |',
      ].join('\n\n'),
    );
    expect(d.html).toContain('<section data-sheet="2">');
    expect(d.metadata).toMatchObject({ title: 'Inventory', author: 'Grace Hopper', pages: 2 });
  });

  it('a workbook’s dates and times come as ISO 8601 by their number format; other numbers as stored', async () => {
    for (const from1904 of [false, true]) {
      const d = readOffice(await datedWorkbook(from1904), 1_000_000);
      expect(d.markdown).toContain(
        [
          '| What | Value |',
          '| --- | --- |',
          '| Signed | 2024-03-15 |',
          '| Shipped | 2023-11-02 |',
          '| Opens | 13:30:00 |',
          '| Stamped | 2024-01-31 14:30:05 |',
          '| Price | 45123.5 |',
          '| Share | 0.25 |',
          '| Hours | 1.25 |',
        ].join('\n'),
      );
    }
  });

  it('a format code is a date, a time, both or neither', () => {
    expect(shapeOfCode('dd/mm/yyyy')).toBe('date');
    expect(shapeOfCode('mmm yyyy')).toBe('date');
    expect(shapeOfCode('mm:ss')).toBe('time');
    expect(shapeOfCode('h:mm:ss AM/PM')).toBe('time');
    expect(shapeOfCode('d/m/yy h:mm')).toBe('datetime');
    expect(shapeOfCode('General')).toBe('number');
    expect(shapeOfCode('#,##0 "days"')).toBe('number');
    expect(shapeOfCode('0.00E+00')).toBe('number');
    expect(shapeOfCode('[Red][<0]0.00;0.00')).toBe('number');
    expect(shapeOfCode('_("$"* #,##0_)')).toBe('number');
    expect(shapeOfCode('[h]:mm')).toBe('number');
  });

  it('a deck: five slides marked, titles as headings, bullets as items, speaker notes', () => {
    const d = readOffice(deck(), 1_000_000);
    expect(d.family).toBe('pptx');
    const slides = d.markdown.split(/<!-- slide \d -->\n\n/).slice(1);
    expect(slides).toHaveLength(5);
    slides.forEach((s, i) =>
      expect(s.trim()).toBe(
        `## Slide title ${i + 1}\n\n- First point ${i + 1}\n- Second point ${i + 1}\n\nNotes: Say this on slide ${i + 1}`,
      ),
    );
    expect(d.metadata).toMatchObject({ title: 'Launch Review', author: 'Katherine Johnson', pages: 5 });
  });

  it('a 100,000-row sheet is read up to its row cap and marked truncated', async () => {
    const d = readOffice(bigSheet(100_000), 50_000_000);
    expect(d.truncated).toBe(true);
    const rows = d.markdown.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| ---'));
    expect(rows).toHaveLength(MAX_ROWS);
    expect(rows.at(-1)).toBe(`| ${MAX_ROWS - 1} | item ${MAX_ROWS - 1} | ${(MAX_ROWS - 1) * 3} |`);
  });

  it('the character cap cuts the document and says so', () => {
    const d = readOffice(plainWord('word '.repeat(100)), 100);
    expect([d.truncated, d.markdown]).toEqual([true, '']);
  });

  it('refuses a zip bomb before inflating it, whether its stated size is true or a lie', () => {
    // A part stating 300 MiB, over the 64 MiB a part may inflate to.
    expect(failure(() => readOffice(wordBomb(1, 300 * 1024 * 1024), 1_000_000))).toMatchObject({
      kind: 'too_large',
      message: expect.stringMatching(/word\/document\.xml would inflate to 314572800 bytes/),
    });
    // A part that states 1 MiB but inflates to 20: zlib stops at what it states.
    expect(failure(() => readOffice(wordBomb(20, 1024 * 1024), 1_000_000))).toMatchObject({
      kind: 'too_large',
      message: expect.stringMatching(/inflates past the size it states/),
    });
    // 8 MiB of spaces deflate about a thousandfold: past any XML's ratio.
    expect(failure(() => readOffice(wordBomb(8), 1_000_000))).toMatchObject({
      kind: 'too_large',
      message: expect.stringMatching(/claims to inflate \d+ times/),
    });
  });

  it('refuses a billion laughs and an external entity, never reading the file it names', () => {
    expect(failure(() => readOffice(wordWithXml(BILLION_LAUGHS), 1_000_000))).toEqual({
      kind: 'unreadable',
      message: 'word/document.xml has a DOCTYPE, which documents of this kind never have',
    });
    const secret = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-xxe-')), 'secret.txt');
    fs.writeFileSync(secret, 'the secret words');
    const f = failure(() => readOffice(wordWithXml(externalEntity(secret)), 1_000_000));
    expect(f.kind).toBe('unreadable');
    expect(f.message).not.toContain('the secret words');
  });

  it('a damaged archive, one of no Office kind, and bad XML are unreadable, naming why', () => {
    const word = plainWord('hello');
    expect(failure(() => readOffice(word.subarray(0, word.length - 30), 1000))).toMatchObject({
      kind: 'unreadable',
      message: expect.stringMatching(/damaged/),
    });
    const other = zipOf([{ name: 'notes.txt', data: Buffer.from('just notes') }]);
    expect(failure(() => readOffice(other, 1000)).message).toMatch(
      /not a Word, Excel, PowerPoint, OpenDocument or EPUB file/,
    );
    expect(failure(() => readOffice(wordWithXml('<w:document><w:body>'), 1000)).message).toMatch(
      /word\/document\.xml is not well-formed XML/,
    );
    // Garbage after a valid start, and a directory pointing past the end.
    const cut = Buffer.from(word);
    cut.writeUInt32LE(cut.length + 1000, cut.length - 6);
    expect(failure(() => readOffice(cut, 1000)).kind).toBe('unreadable');
  });

  it('an empty Word file has no text', () => {
    const d = readOffice(wordWithXml('<w:document><w:body><w:p/></w:body></w:document>'), 1000);
    expect([d.hasText, d.markdown]).toEqual([false, '']);
  });
});

describe('OpenDocument files read into the three formats', () => {
  it('a text: headings, nested and numbered lists, a table with a spanned cell, properties', () => {
    const d = readOffice(odtFile(), 1_000_000);
    expect(d.family).toBe('odt');
    expect(d.markdown).toBe(
      [
        '# Field Report',
        'The survey covered three valleys.',
        '## Methods',
        '### Sampling',
        '- Walk the transect\n   - Count the nests\n1. Weigh the samples\n2. Record the weights',
        'Ελληνικά κείμενα και 日本語のテキスト.',
        '| Valley | Nests | Notes |\n| --- | --- | --- |\n| North and South |  | Merged down |\n| East | 12 |  |',
      ].join('\n\n'),
    );
    expect(d.metadata).toEqual({
      title: 'Open text',
      author: 'Hedy Lamarr',
      published_at: '2024-05-01T10:00:00.000Z',
      language: 'en-GB',
      pages: 3,
    });
  });

  it('a spreadsheet: sheets under their names; a million repeated empty rows and a thousand empty cells cost nothing', () => {
    const d = readOffice(odsFile(), 1_000_000);
    expect(d.family).toBe('ods');
    expect([d.truncated, d.metadata.pages]).toEqual([false, 2]);
    expect(d.markdown).toBe(
      [
        '<!-- sheet 1 -->',
        '# Stock',
        '| Item | Count |\n| --- | --- |\n| Bolts | 120 |\n| Bolts | 120 |',
        '<!-- sheet 2 -->',
        '# Суппліери',
        '| Name | City |  |  |  |\n| --- | --- | --- | --- | --- |\n| Acme |  |  |  | Kyiv |',
      ].join('\n\n'),
    );
  });

  it('a cell of text repeated 16,384 across and a million down is read within the row and column caps', () => {
    const d = readOffice(repeatedCells(), 16 * 1024 * 1024);
    expect(d.truncated).toBe(true);
    const rows = d.text.split('\n').slice(2);
    expect(rows).toHaveLength(MAX_ROWS);
    expect(rows[0].split('\t')).toHaveLength(256);
  });

  it('a presentation: slides marked, titles as headings, bullets, notes', () => {
    const d = readOffice(odpFile(), 1_000_000);
    expect(d.family).toBe('odp');
    expect(d.markdown).toBe(
      [1, 2]
        .map(
          (i) =>
            `<!-- slide ${i} -->\n\n## Slide title ${i}\n\n- First point ${i}\n\nNotes: Say this on slide ${i}`,
        )
        .join('\n\n'),
    );
  });
});

describe('the pages option chooses slides, sheets and chapters', () => {
  const marks = (md: string) => [...md.matchAll(/<!-- (?:slide|sheet) (\d+) -->/g)].map((m) => Number(m[1]));

  it('a deck, an OpenDocument presentation, a workbook and an OpenDocument spreadsheet keep the named ones', async () => {
    const pptx = readOffice(deck(), 1_000_000, parsePageRanges('2,4-'));
    expect([marks(pptx.markdown), pptx.truncated, pptx.metadata.pages]).toEqual([[2, 4, 5], true, 5]);
    expect(pptx.markdown).toContain('Say this on slide 4');
    expect(pptx.markdown).not.toContain('slide 1\n');
    const odp = readOffice(odpFile(), 1_000_000, parsePageRanges('2'));
    expect([marks(odp.markdown), odp.truncated, odp.metadata.pages]).toEqual([[2], true, 2]);
    expect(odp.markdown).not.toContain('Slide title 1');
    const xlsx = readOffice(await workbook(), 1_000_000, parsePageRanges('2'));
    expect([marks(xlsx.markdown), xlsx.truncated, xlsx.metadata.pages]).toEqual([[2], true, 2]);
    expect(xlsx.markdown).toContain('# Суппліери');
    expect(xlsx.markdown).not.toContain('Bolts');
    const ods = readOffice(odsFile(), 1_000_000, parsePageRanges('1'));
    expect([marks(ods.markdown), ods.truncated, ods.metadata.pages]).toEqual([[1], true, 2]);
    expect(ods.markdown).not.toContain('Kyiv');
    // Every page named: nothing is cut.
    const all = readOffice(deck(), 1_000_000, parsePageRanges('1-5'));
    expect([all.markdown, all.truncated]).toEqual([readOffice(deck(), 1_000_000).markdown, false]);
  });

  it('a sheet left out is never read: a hostile one after the named sheet costs nothing', () => {
    // Sheet 1 would pass the row cap; sheet 2 alone is read whole.
    const text = (t: string, more = '') =>
      `<table:table-cell office:value-type="string"${more}><text:p>${t}</text:p></table:table-cell>`;
    const huge =
      '<table:table table:name="Huge"><table:table-row table:number-rows-repeated="1048576">' +
      `${text('x', ' table:number-columns-repeated="16384"')}</table:table-row></table:table>`;
    const small = `<table:table table:name="Small"><table:table-row>${text('only')}${text('row')}</table:table-row></table:table>`;
    const d = readOffice(odsOf(huge + small), 1_000_000, parsePageRanges('2'));
    expect([marks(d.markdown), d.truncated]).toEqual([[2], true]);
    expect(d.markdown).toContain('| only | row |');
  });

  it("a TIFF's pages read by OCR: the named ones kept with their numbers, within the character cap", () => {
    const para = (text: string) => [{ kind: 'paragraph' as const, text }];
    const read = [para('page one'), para('page two'), para('page three')];
    expect(pagesKept(read, parsePageRanges('2-'), 1000)).toEqual({
      pages: [
        { page: 2, blocks: para('page two') },
        { page: 3, blocks: para('page three') },
      ],
      truncated: true,
    });
    expect(pagesKept(read, undefined, 1000)).toMatchObject({ truncated: false });
    // The cap: the second named page's text does not fit.
    expect(pagesKept(read, parsePageRanges('1,3'), 12)).toEqual({
      pages: [
        { page: 1, blocks: para('page one') },
        { page: 3, blocks: [] },
      ],
      truncated: true,
    });
  });

  it('an e-book keeps the chapters named; a Word file, a flow, is read whole', async () => {
    const second = readOffice(epubFile(), 1_000_000, parsePageRanges('2'));
    expect([second.markdown, second.truncated]).toEqual(['# Chapter Two\n\nPears, then.', true]);
    const word = await wordFile();
    const whole = readOffice(word, 1_000_000);
    expect(readOffice(word, 1_000_000, parsePageRanges('3-4'))).toEqual(whole);
  });
});

describe('CSV files read as a table', () => {
  it('quoted fields, embedded line ends, a BOM, semicolons: one table, its first row the header', async () => {
    const csv = '\ufeffName;City;Note\r\nAcme;"Kyiv";"two\nlines"\r\n\r\n"Smith; Sons";Lviv;\r\n';
    const d = await readCsvFile(Buffer.from(csv), 1_000_000);
    expect(d.family).toBe('csv');
    expect(d.markdown).toBe(
      '| Name | City | Note |\n| --- | --- | --- |\n| Acme | Kyiv | two lines |\n| Smith; Sons | Lviv |  |',
    );
    expect(d.html).toBe(
      '<table><tr><td>Name</td><td>City</td><td>Note</td></tr><tr><td>Acme</td><td>Kyiv</td><td>two lines</td></tr><tr><td>Smith; Sons</td><td>Lviv</td></tr></table>',
    );
  });

  it('100,000 rows are cut at the row cap; a quote never closed is unreadable, naming why', async () => {
    const rows = ['id,name', ...Array.from({ length: 100_000 }, (_, i) => `${i},item ${i}`)].join('\n');
    const d = await readCsvFile(Buffer.from(rows), 50_000_000);
    expect(d.truncated).toBe(true);
    expect(d.text.split('\n')).toHaveLength(MAX_ROWS);
    await expect(readCsvFile(Buffer.from('a,b\n"x,y\n'), 1000)).rejects.toThrow(/the CSV cannot be read/);
  });
});

describe('E-books read as one flow', () => {
  it('chapters in reading order: headings, paragraphs with entities, a nested list, a table, metadata', () => {
    const d = readOffice(epubFile(), 1_000_000);
    expect(d.family).toBe('epub');
    expect(d.markdown).toBe(
      [
        '# Chapter One',
        'Apples grow on trees & in orchards.',
        '## Kinds',
        '- Eating\n   - Gala\n- Cooking',
        '| Kind | Season |\n| --- | --- |\n| Gala | Autumn |',
        '# Chapter Two',
        'Pears, then.',
      ].join('\n\n'),
    );
    expect(d.metadata).toEqual({
      title: 'The Orchard Book',
      author: 'Mary Shelley',
      description: 'On apples.',
      published_at: '2019-03-04T00:00:00.000Z',
      language: 'en',
      pages: 2,
    });
  });

  it('a chapter’s own entities are never expanded: a billion laughs stays its text', () => {
    const laughs = BILLION_LAUGHS.slice(
      BILLION_LAUGHS.indexOf('<!DOCTYPE'),
      BILLION_LAUGHS.indexOf(']>') + 2,
    );
    const d = readOffice(epubFile('<p>&lol9;</p>', laughs), 1_000_000);
    expect(d.text.endsWith('&lol9;')).toBe(true);
  });
});

describe('RTF files', () => {
  it('headings, paragraphs, a list, a table; code-page and Unicode characters; no font, style, picture or field code', () => {
    const d = readRtfFile(rtfFile(), 1_000_000);
    expect(d.family).toBe('rtf');
    expect(d.markdown).toBe(
      [
        '# Café Report',
        'The price is 5€ today, roughly.',
        '## Beans',
        '- Arabica\n   - Bourbon',
        'Visit the site.',
        '| Kind | Price |\n| --- | --- |\n| Mocha | 4 |',
        'After the table.',
      ].join('\n\n'),
    );
    expect(d.metadata).toEqual({
      title: 'Café Notes',
      author: 'Ada Lovelace',
      description: 'Coffee',
      pages: 1,
    });
  });

  it('groups nested past 200 are refused; text stops at the character cap', () => {
    expect(() => readRtfFile(Buffer.from('{\\rtf1' + '{'.repeat(10_000)), 1000)).toThrow(/deeper than 200/);
    const long = readRtfFile(Buffer.from(`{\\rtf1 ${'word '.repeat(1000)}\\par}`), 100);
    expect(long.truncated).toBe(true);
  });
});

describe('hostile shapes stay within the caps', () => {
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  const word = (body: string) => wordWithXml(`<w:document ${W}><w:body>${body}</w:body></w:document>`);

  it('a Word table of 128,000 spanned columns and 20,000 empty rows: capped, truncated, quickly', () => {
    const wide = `<w:tr>${'<w:tc><w:tcPr><w:gridSpan w:val="64"/></w:tcPr><w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc>'.repeat(2000)}</w:tr>`;
    const d = readOffice(word(`<w:tbl>${wide}${'<w:tr><w:tc/></w:tr>'.repeat(20_000)}</w:tbl>`), 1_000_000);
    expect(d.truncated).toBe(true);
    const rows = d.markdown.split('\n');
    expect(rows).toHaveLength(2); // the one row with text, and the header's rule
    expect(rows[0].split(' | ')).toHaveLength(MAX_COLUMNS);
  });

  it('an OpenDocument row of 20,000 empty cells repeated 16,384 times, then text: the text past the width is cut', () => {
    const row = `<table:table-row>${'<table:table-cell table:number-columns-repeated="16384"/>'.repeat(20_000)}<table:table-cell><text:p>late</text:p></table:table-cell></table:table-row>`;
    const d = readOffice(
      odsOf(
        `<table:table table:name="S"><table:table-row><table:table-cell><text:p>a</text:p></table:table-cell></table:table-row>${row}</table:table>`,
      ),
      1_000_000,
    );
    expect(d.truncated).toBe(true);
    expect(d.markdown).not.toContain('late');
  });

  it('an OpenDocument text whose table passes the row cap keeps the rows it read', () => {
    const rows = Array.from(
      { length: MAX_ROWS + 1 },
      (_, i) =>
        `<table:table-row><table:table-cell><text:p>r${i}</text:p></table:table-cell></table:table-row>`,
    );
    const d = readOffice(odtFile(`<table:table table:name="T">${rows.join('')}</table:table>`), 10_000_000);
    expect(d.truncated).toBe(true);
    // The document's rows count together: the first table's three, then this one's up to the cap.
    expect(d.markdown).toContain(`| r${MAX_ROWS - 4} |`);
    expect(d.markdown).not.toContain(`| r${MAX_ROWS - 3} |`);
  });

  it('a 1 MB shared string in every cell of a sheet stops at the character cap', () => {
    // About 1 MB of words that do not repeat, as text packs (3 to 4 times).
    const big = Array.from({ length: 130_000 }, (_, i) => `w${(i * 7919) % 100_003}`).join(' ');
    const cells = Array.from(
      { length: 50 },
      (_, c) => `<c r="${String.fromCharCode(65 + (c % 26))}${c < 26 ? '' : 'A'}1" t="s"><v>0</v></c>`,
    );
    const sheet = `<worksheet><sheetData>${Array.from({ length: 40 }, (_, r) => `<row r="${r + 1}">${cells.join('')}</row>`).join('')}</sheetData></worksheet>`;
    const rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
    const xlsx = zipOf([
      {
        name: 'xl/workbook.xml',
        data: Buffer.from(
          `<workbook ${rel}><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
        ),
      },
      {
        name: 'xl/_rels/workbook.xml.rels',
        data: Buffer.from(
          '<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>',
        ),
      },
      { name: 'xl/sharedStrings.xml', data: Buffer.from(`<sst><si><t>${big}</t></si></sst>`) },
      { name: 'xl/worksheets/sheet1.xml', data: Buffer.from(sheet) },
    ]);
    const d = readOffice(xlsx, 4_000_000);
    expect(d.truncated).toBe(true);
    expect(d.markdown.length).toBeLessThan(8_000_000);
  });

  it('a stored part whose size is not its bytes is damaged', () => {
    const z = zipOf([
      { name: 'word/document.xml', data: Buffer.alloc(4096, 0x20), store: true, statedSize: 10 },
    ]);
    expect(failure(() => readOffice(z, 1000)).message).toMatch(/stored in 4096 bytes but states 10/);
  });

  it('an e-book chapter with a self-closing script keeps the text after it', () => {
    const d = readOffice(epubFile('<script src="a.js"/><p>After the script.</p>'), 1_000_000);
    expect(d.markdown).toContain('After the script.');
  });

  it('a CSV of 300 columns is cut at the column cap and says so', async () => {
    const row = Array.from({ length: 300 }, (_, i) => `c${i}`).join(',');
    const d = await readCsvFile(Buffer.from(`${row}\n${row}\n`), 1_000_000);
    expect(d.truncated).toBe(true);
    expect(d.text.split('\n')[0].split('\t')).toHaveLength(MAX_COLUMNS);
  });
});

describe('list numbers and shapes as their files give them', () => {
  it('a Word list starting at 5 is numbered from 5', async () => {
    const doc = new Document({
      numbering: {
        config: [
          { reference: 'five', levels: [{ level: 0, format: LevelFormat.DECIMAL, text: '%1.', start: 5 }] },
        ],
      },
      sections: [
        {
          children: ['Fifth', 'Sixth'].map(
            (t) => new Paragraph({ text: t, numbering: { reference: 'five', level: 0 } }),
          ),
        },
      ],
    });
    const d = readOffice(await Packer.toBuffer(doc), 1_000_000);
    expect(d.markdown).toBe('5. Fifth\n6. Sixth');
  });

  it('an OpenDocument list that continues the one before counts on; a start value starts it there', () => {
    const list = (items: string, attrs = '') =>
      `<text:list text:style-name="L2"${attrs}>${items}</text:list>`;
    const item = (t: string, attrs = '') => `<text:list-item${attrs}><text:p>${t}</text:p></text:list-item>`;
    const d = readOffice(
      odtFile(
        list(item('c1') + item('c2')) +
          '<text:p>Between the lists.</text:p>' +
          list(item('c3'), ' text:continue-numbering="true"') +
          list(item('c7', ' text:start-value="7"') + item('c8')),
      ),
      1_000_000,
    );
    expect(d.markdown).toContain('1. c1\n2. c2\n\nBetween the lists.\n\n3. c3\n7. c7\n8. c8');
  });

  it('a table after a slide’s title is the slide’s text, not headings', () => {
    const d = readOffice(deck(true), 1_000_000);
    const first = d.markdown.split('<!-- slide 2 -->')[0];
    expect(first).toContain('## Slide title 1');
    expect(first).toContain('Cell A');
    expect(first).not.toMatch(/^## Cell/m);
  });
});
