import { execFileSync } from 'node:child_process';
import * as zlib from 'node:zlib';
import {
  AlignmentType,
  Document,
  HeadingLevel,
  LevelFormat,
  Packer,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  VerticalMergeType,
} from 'docx';
import ExcelJS from 'exceljs';
import { ROOT } from './process';

/**
 * Office files made here, by the libraries that write them (docx, exceljs), and hostile archives
 * made by hand: the shapes the document parser must read, and the ones it must refuse.
 */

/** A Word file: headings at three levels, a nested list (bullets over numbers), a table with merged cells, Greek and Japanese text, its properties. */
export async function wordFile(): Promise<Buffer> {
  const doc = new Document({
    title: 'Quarterly Field Report',
    creator: 'Ada Lovelace',
    description: 'What the survey found',
    numbering: {
      config: [
        {
          reference: 'steps',
          levels: [
            { level: 0, format: LevelFormat.DECIMAL, text: '%1.', alignment: AlignmentType.START },
            { level: 1, format: LevelFormat.DECIMAL, text: '%2.', alignment: AlignmentType.START },
          ],
        },
      ],
    },
    sections: [
      {
        children: [
          new Paragraph({ text: 'Field Report', heading: HeadingLevel.HEADING_1 }),
          new Paragraph('The survey covered three valleys over the spring.'),
          new Paragraph({ text: 'Methods', heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ text: 'Sampling', heading: HeadingLevel.HEADING_3 }),
          new Paragraph({ text: 'Walk the transect', bullet: { level: 0 } }),
          new Paragraph({ text: 'Count the nests', bullet: { level: 1 } }),
          new Paragraph({ text: 'Weigh the samples', numbering: { reference: 'steps', level: 0 } }),
          new Paragraph({ text: 'Record the weights', numbering: { reference: 'steps', level: 0 } }),
          new Paragraph({ text: 'Ελληνικά κείμενα και 日本語のテキスト.' }),
          new Table({
            rows: [
              new TableRow({
                children: [
                  new TableCell({ children: [new Paragraph('Valley')] }),
                  new TableCell({ children: [new Paragraph('Nests')] }),
                  new TableCell({ children: [new Paragraph('Notes')] }),
                ],
              }),
              new TableRow({
                children: [
                  new TableCell({ children: [new Paragraph('North and South')], columnSpan: 2 }),
                  new TableCell({
                    children: [new Paragraph('Merged down')],
                    verticalMerge: VerticalMergeType.RESTART,
                  }),
                ],
              }),
              new TableRow({
                children: [
                  new TableCell({ children: [new Paragraph('East')] }),
                  new TableCell({ children: [new Paragraph('12')] }),
                  new TableCell({ children: [], verticalMerge: VerticalMergeType.CONTINUE }),
                ],
              }),
            ],
          }),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

/** A workbook of two sheets, with strings, numbers, a formula and a boolean. */
export async function workbook(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  wb.creator = 'Grace Hopper';
  wb.title = 'Inventory';
  const a = wb.addWorksheet('Stock');
  a.addRow(['Item', 'Count', 'In stock']);
  a.addRow(['Bolts', 120, true]);
  a.addRow(['Nuts', 80, false]);
  a.getCell('B4').value = { formula: 'B2+B3', result: 200 };
  const b = wb.addWorksheet('Суппліери');
  b.addRow(['Name', 'City']);
  b.addRow(['Acme', 'Kyiv']);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/**
 * A workbook of dates and times as Excel keeps them (numbers with a date format): a built-in date
 * format, a custom one with a locale and text, a time, a date and time, a money amount and a
 * percentage that stay numbers; counted from 1904 when `from1904`.
 */
export async function datedWorkbook(from1904 = false): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  wb.properties.date1904 = from1904;
  const ws = wb.addWorksheet('Dates');
  ws.addRow(['What', 'Value']);
  ws.addRow(['Signed', new Date(Date.UTC(2024, 2, 15))]);
  ws.getCell('B2').numFmt = 'mm-dd-yy';
  ws.addRow(['Shipped', new Date(Date.UTC(2023, 10, 2))]);
  ws.getCell('B3').numFmt = '[$-409]mmmm d, yyyy;@';
  ws.addRow(['Opens', 0.5625]);
  ws.getCell('B4').numFmt = 'h:mm AM/PM';
  ws.addRow(['Stamped', new Date(Date.UTC(2024, 0, 31, 14, 30, 5))]);
  ws.getCell('B5').numFmt = 'yyyy-mm-dd hh:mm:ss';
  ws.addRow(['Price', 45123.5]);
  ws.getCell('B6').numFmt = '"$"#,##0.00_);[Red]("$"#,##0.00)';
  ws.addRow(['Share', 0.25]);
  ws.getCell('B7').numFmt = '0%';
  ws.addRow(['Hours', 1.25]);
  ws.getCell('B8').numFmt = '[h]:mm';
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** A workbook of one sheet: a header row, then `rows` rows of an id, a name and an amount (inline strings). */
export function bigSheet(rows: number): Buffer {
  const row = (r: number, cells: string[]) =>
    `<row r="${r}">${cells.map((c, i) => `<c r="${'ABC'[i]}${r}" t="inlineStr"><is><t>${c}</t></is></c>`).join('')}</row>`;
  const data = [row(1, ['id', 'name', 'amount'])];
  for (let i = 1; i <= rows; i++) data.push(row(i + 1, [`${i}`, `item ${i}`, `${i * 3}`]));
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  const rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  return zipOf([
    { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
    {
      name: 'xl/workbook.xml',
      data: Buffer.from(
        `<workbook ${ns} ${rel}><sheets><sheet name="Big" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      ),
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: Buffer.from(
        '<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>',
      ),
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: Buffer.from(`<worksheet ${ns}><sheetData>${data.join('')}</sheetData></worksheet>`),
    },
  ]);
}

/**
 * A deck of five slides, each with a title (the layout's title placeholder), two bullets and
 * speaker notes (with `table`, the first slide has a table straight after its title). Made in a node of its own: the library loads its writers by dynamic import,
 * which jest's module sandbox refuses.
 */
export function deck(table = false): Buffer {
  const script = `
    const PptxGenJS = require('pptxgenjs');
    const p = new PptxGenJS();
    p.author = 'Katherine Johnson';
    p.title = 'Launch Review';
    p.defineSlideMaster({
      title: 'TITLED',
      objects: [{ placeholder: { options: { name: 'title', type: 'title', x: 0.5, y: 0.3, w: 9, h: 1 }, text: '' } }],
    });
    for (let i = 1; i <= 5; i++) {
      const s = p.addSlide({ masterName: 'TITLED' });
      s.addText('Slide title ' + i, { placeholder: 'title' });
      // Straight after the title: a shape that is no placeholder, of its own kind.
      if (${table} && i === 1) s.addTable([[{ text: 'Cell A' }, { text: 'Cell B' }]], { x: 0.5, y: 4.5, w: 9 });
      s.addText(
        [
          { text: 'First point ' + i, options: { bullet: true, breakLine: true } },
          { text: 'Second point ' + i, options: { bullet: true } },
        ],
        { x: 0.5, y: 1.5, w: 9, h: 3 },
      );
      s.addNotes('Say this on slide ' + i);
    }
    p.write({ outputType: 'base64' }).then((b) => process.stdout.write(b));`;
  const out = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  return Buffer.from(out.toString(), 'base64');
}

/** A zip archive of the given parts, deflated (or stored), with sizes as stated or lied about. */
export function zipOf(parts: { name: string; data: Buffer; statedSize?: number; store?: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const data = p.store ? p.data : zlib.deflateRawSync(p.data);
    const name = Buffer.from(p.name, 'utf8');
    const size = p.statedSize ?? p.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(p.store ? 0 : 8, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(p.store ? 0 : 8, 10);
    cd.writeUInt32LE(data.length, 20);
    cd.writeUInt32LE(size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    central.push(cd, name);
    offset += local.length + name.length + data.length;
  }
  const cdBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(cdBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cdBytes, end]);
}

const wordBody = (inner: string) =>
  Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${inner}</w:body></w:document>`,
  );

/** A Word file whose document part is `xml` (a billion laughs, an external entity). */
export const wordWithXml = (xml: string): Buffer =>
  zipOf([
    { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
    { name: 'word/document.xml', data: Buffer.from(xml) },
  ]);

/** A Word file of one paragraph. */
export const plainWord = (text: string): Buffer =>
  zipOf([
    { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
    { name: 'word/document.xml', data: wordBody(`<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`) },
  ]);

/** A zip bomb dressed as a Word file: a document part of `mb` MiB of zeros, deflated (about 1,000 times). */
export function wordBomb(mb: number, statedSize?: number): Buffer {
  return zipOf([
    { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
    { name: 'word/document.xml', data: Buffer.alloc(mb * 1024 * 1024, 0x20), statedSize },
  ]);
}

export const BILLION_LAUGHS =
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
  '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">' +
  '<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;"><!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">' +
  '<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;"><!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">' +
  '<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>' +
  '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>';

/** A document part whose entity names a local file. */
export const externalEntity = (file: string): string =>
  `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY secret SYSTEM "file://${file}">]>` +
  '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&secret;</w:t></w:r></w:p></w:body></w:document>';

const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ' +
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" ' +
  'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.3"';

/** An OpenDocument file as LibreOffice lays one out: mimetype first and stored, content and meta. */
function odf(kind: 'text' | 'spreadsheet' | 'presentation', body: string, styles = '', pages = 1): Buffer {
  const meta =
    `<office:document-meta ${ODF_NS}><office:meta><dc:title>Open ${kind}</dc:title>` +
    '<meta:initial-creator>Hedy Lamarr</meta:initial-creator><meta:creation-date>2024-05-01T10:00:00Z</meta:creation-date>' +
    `<dc:language>en-GB</dc:language><meta:document-statistic meta:page-count="${pages}"/></office:meta></office:document-meta>`;
  return zipOf([
    { name: 'mimetype', data: Buffer.from(`application/vnd.oasis.opendocument.${kind}`), store: true },
    {
      name: 'content.xml',
      data: Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ODF_NS}><office:automatic-styles>${styles}</office:automatic-styles>` +
          `<office:body><office:${kind}>${body}</office:${kind}></office:body></office:document-content>`,
      ),
    },
    { name: 'meta.xml', data: Buffer.from(meta) },
  ]);
}

const p = (t: string) => `<text:p>${t}</text:p>`;
const cell = (t: string, attrs = '') => `<table:table-cell${attrs}>${t ? p(t) : ''}</table:table-cell>`;

/** An OpenDocument text: the Word file's shapes (headings, nested list, numbered list, merged table). */
export const odtFile = (more = ''): Buffer =>
  odf(
    'text',
    '<text:h text:outline-level="1">Field Report</text:h>' +
      p('The survey<text:s text:c="2"/>covered three valleys.') +
      '<text:h text:outline-level="2">Methods</text:h><text:h text:outline-level="3">Sampling</text:h>' +
      `<text:list text:style-name="L1"><text:list-item>${p('Walk the transect')}<text:list><text:list-item>${p('Count the nests')}</text:list-item></text:list></text:list-item></text:list>` +
      `<text:list text:style-name="L2"><text:list-item>${p('Weigh the samples')}</text:list-item><text:list-item>${p('Record the weights')}</text:list-item></text:list>` +
      p('Ελληνικά κείμενα και 日本語のテキスト.') +
      '<table:table table:name="Valleys"><table:table-column table:number-columns-repeated="3"/>' +
      `<table:table-row>${cell('Valley')}${cell('Nests')}${cell('Notes')}</table:table-row>` +
      `<table:table-row>${cell('North and South', ' table:number-columns-spanned="2"')}<table:covered-table-cell/>${cell('Merged down')}</table:table-row>` +
      `<table:table-row>${cell('East')}${cell('12')}${cell('')}</table:table-row></table:table>` +
      more,
    '<text:list-style style:name="L1"><text:list-level-style-bullet text:level="1"/></text:list-style>' +
      '<text:list-style style:name="L2"><text:list-level-style-number text:level="1"/></text:list-style>',
    3,
  );

/** An OpenDocument spreadsheet of the given body (its tables). */
export const odsOf = (body: string): Buffer => odf('spreadsheet', body);

/** An OpenDocument spreadsheet of two sheets, with the repeated empty rows and cells LibreOffice writes. */
export const odsFile = (): Buffer =>
  odf(
    'spreadsheet',
    '<table:table table:name="Stock">' +
      `<table:table-row>${cell('Item')}${cell('Count')}${cell('', ' table:number-columns-repeated="1020"')}</table:table-row>` +
      `<table:table-row table:number-rows-repeated="2">${cell('Bolts')}${cell('120', ' office:value-type="float" office:value="120"')}</table:table-row>` +
      `<table:table-row table:number-rows-repeated="1048573">${cell('', ' table:number-columns-repeated="1024"')}</table:table-row></table:table>` +
      `<table:table table:name="Суппліери"><table:table-row>${cell('Name')}${cell('City')}</table:table-row>` +
      `<table:table-row>${cell('Acme')}${cell('', ' table:number-columns-repeated="3"')}${cell('Kyiv')}</table:table-row></table:table>`,
  );

/** An OpenDocument presentation of two slides with titles, bullets and notes. */
export const odpFile = (): Buffer =>
  odf(
    'presentation',
    [1, 2]
      .map(
        (i) =>
          `<draw:page draw:name="page${i}"><draw:frame presentation:class="title"><draw:text-box>${p(`Slide title ${i}`)}</draw:text-box></draw:frame>` +
          `<draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item>${p(`First point ${i}`)}</text:list-item></text:list></draw:text-box></draw:frame>` +
          `<presentation:notes><draw:frame presentation:class="notes"><draw:text-box>${p(`Say this on slide ${i}`)}</draw:text-box></draw:frame></presentation:notes></draw:page>`,
      )
      .join(''),
  );

/** A spreadsheet whose one cell of text is repeated 16,384 times across and a million rows down. */
export const repeatedCells = (): Buffer =>
  odf(
    'spreadsheet',
    '<table:table table:name="Flood"><table:table-row table:number-rows-repeated="1048576">' +
      `${cell('x', ' table:number-columns-repeated="16384"')}</table:table-row></table:table>`,
  );

/** An e-book (EPUB 2, XHTML chapters with a DOCTYPE and HTML entities): two chapters, a nested list, a table, metadata. */
export function epubFile(
  chapter2 = '',
  doctype = '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">',
): Buffer {
  const xhtml = (title: string, body: string) =>
    Buffer.from(
      `<?xml version="1.0" encoding="utf-8"?>${doctype}` +
        `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>${title}</title><style>p { margin: 0 }</style></head><body>${body}</body></html>`,
    );
  const opf =
    '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="id">' +
    '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>The Orchard Book</dc:title><dc:creator>Mary Shelley</dc:creator>' +
    '<dc:language>en</dc:language><dc:date>2019-03-04</dc:date><dc:description>On apples.</dc:description></metadata>' +
    '<manifest><item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="text/ch%202.xhtml" media-type="application/xhtml+xml"/>' +
    '<item id="css" href="style.css" media-type="text/css"/></manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>';
  return zipOf([
    { name: 'mimetype', data: Buffer.from('application/epub+zip'), store: true },
    {
      name: 'META-INF/container.xml',
      data: Buffer.from(
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
      ),
    },
    { name: 'OEBPS/content.opf', data: Buffer.from(opf) },
    {
      name: 'OEBPS/text/ch1.xhtml',
      data: xhtml(
        'One',
        '<h1>Chapter One</h1><p>Apples&nbsp;grow on trees &amp; in orchards.</p><h2>Kinds</h2>' +
          '<ul><li>Eating<ul><li>Gala</li></ul></li><li>Cooking</li></ul>' +
          '<table><tr><th>Kind</th><th>Season</th></tr><tr><td>Gala</td><td>Autumn</td></tr></table>',
      ),
    },
    {
      name: 'OEBPS/text/ch 2.xhtml',
      data: xhtml('Two', `<h1>Chapter Two</h1><p>Pears, then.</p>${chapter2}`),
    },
  ]);
}

/** An RTF file as word processors write one: tables of fonts, colours and styles, \info, a picture, a field, headings by outline level, a list, a table, code-page and Unicode characters. */
export const rtfFile = (): Buffer =>
  Buffer.from(
    [
      '{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Helvetica;}{\\f1 Times;}}',
      '{\\colortbl;\\red255\\green0\\blue0;}{\\stylesheet{\\s1\\outlinelevel0 heading 1;}}',
      "{\\*\\generator Writer 7.0;}{\\info{\\title Caf\\'e9 Notes}{\\author Ada Lovelace}{\\subject Coffee}}",
      "\\pard\\s1\\outlinelevel0\\b Caf\\'e9 Report\\b0\\par",
      '\\pard The price is 5\\u8364? today, {\\i roughly}.\\par',
      '{\\pict\\pngblip 89504e470d0a1a0a0000}',
      '\\pard\\outlinelevel1 Beans\\par',
      '\\pard\\ls1\\ilvl0 Arabica\\par\\pard\\ls1\\ilvl1 Bourbon\\par',
      '\\pard Visit {\\field{\\*\\fldinst HYPERLINK "http://example.com"}{\\fldrslt the site}}.\\par',
      '\\trowd\\cellx1000\\cellx2000\\pard\\intbl Kind\\cell Price\\cell\\row',
      '\\trowd\\cellx1000\\cellx2000\\pard\\intbl Mocha\\cell 4\\cell\\row',
      '\\pard After the table.\\par}',
    ].join('\n'),
    'latin1',
  );
