import * as fs from 'node:fs';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument, PDFName, PDFString, StandardFonts, type PDFFont, type PDFPage } from 'pdf-lib';

/**
 * Ordinary documents, made with pdf-lib at test time: text at known sizes and places, so a test can
 * say which headings, paragraphs, lists, columns and pages must come out.
 */

export const A4: [number, number] = [595, 842];

/** A line of text: where and how large. */
export interface Placed {
  text: string;
  x: number;
  y: number;
  size: number;
}

async function standard(doc: PDFDocument): Promise<PDFFont> {
  return doc.embedFont(StandardFonts.Helvetica);
}

function draw(page: PDFPage, font: PDFFont, lines: Placed[]): void {
  for (const l of lines) page.drawText(l.text, { x: l.x, y: l.y, size: l.size, font });
}

async function save(doc: PDFDocument): Promise<Buffer> {
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** Body lines from `y` down at 11 pt with 14 pt leading; returns the y below the last. */
function body(lines: Placed[], texts: string[], y: number, x = 50): number {
  for (const text of texts) {
    lines.push({ text, x, y, size: 11 });
    y -= 14;
  }
  return y;
}

/**
 * One page: a 24 pt title, two paragraphs (the first with a word hyphenated over a line end), a
 * bullet list and a numbered list.
 */
export async function onePage(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  const page = doc.addPage(A4);
  const lines: Placed[] = [{ text: 'Annual Report', x: 50, y: 780, size: 24 }];
  let y = body(
    lines,
    ['The committee met four times this year and re-', 'viewed every proposal it was sent.'],
    740,
  );
  y = body(lines, ['A second paragraph follows after a gap.'], y - 10);
  y = body(lines, ['\u2022 first bullet point', '\u2022 second bullet point'], y - 10);
  body(lines, ['1. first numbered step', '2. second numbered step'], y - 10);
  draw(page, font, lines);
  return save(doc);
}

/** `n` pages, each with a 16 pt heading "Chapter k" and 45 lines of body text. */
export async function manyPages(n: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  for (let p = 1; p <= n; p++) {
    const page = doc.addPage(A4);
    const lines: Placed[] = [{ text: `Chapter ${p}`, x: 50, y: 790, size: 16 }];
    const texts = Array.from(
      { length: 45 },
      (_, l) => `Line ${l + 1} of page ${p}: the quick brown fox jumps over the lazy dog again.`,
    );
    body(lines, texts, 760);
    draw(page, font, lines);
  }
  return save(doc);
}

/** Headings at 24, 18 and 14 pt over 11 pt body text, over two pages. */
export async function headings(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  const first = doc.addPage(A4);
  const lines: Placed[] = [{ text: 'Guide to Rivers', x: 50, y: 780, size: 24 }];
  lines.push({ text: 'Sources', x: 50, y: 740, size: 18 });
  const y = body(lines, ['Rivers begin in hills and mountains.', 'Rain and snow feed them.'], 715);
  lines.push({ text: 'Springs', x: 50, y: y - 12, size: 14 });
  body(lines, ['Some rivers start at springs.', 'Water rises from the ground there.'], y - 34);
  draw(first, font, lines);
  const second = doc.addPage(A4);
  const more: Placed[] = [{ text: 'Mouths', x: 50, y: 780, size: 18 }];
  body(more, ['Rivers end in seas and lakes.', 'Deltas form where they slow down.'], 755);
  draw(second, font, more);
  return save(doc);
}

/**
 * Two columns, written column by column (as typesetters write them): the left column's lines all
 * start with "Left", the right's with "Right", and the same heights are used in both.
 */
export async function twoColumns(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  const page = doc.addPage(A4);
  const lines: Placed[] = [];
  body(
    lines,
    Array.from({ length: 6 }, (_, i) => `Left column line ${i + 1} tells its story`),
    780,
    50,
  );
  body(
    lines,
    Array.from({ length: 6 }, (_, i) => `Right column line ${i + 1} goes on apart`),
    780,
    310,
  );
  draw(page, font, lines);
  return save(doc);
}

/** A table: a header row and three rows of three cells, cells far apart on one baseline. */
export async function table(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  const page = doc.addPage(A4);
  const rows = [
    ['Fruit', 'Colour', 'Price'],
    ['Apple', 'Red', '1.20'],
    ['Banana', 'Yellow', '0.80'],
    ['Plum', 'Purple', '2.10'],
  ];
  const lines: Placed[] = [{ text: 'Price list', x: 50, y: 790, size: 11 }];
  rows.forEach((cells, r) =>
    cells.forEach((text, c) => lines.push({ text, x: 50 + c * 150, y: 760 - r * 16, size: 11 })),
  );
  draw(page, font, lines);
  return save(doc);
}

export const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

/** The DejaVu font, or an error that says how to get it. */
export function dejavu(): Buffer {
  if (!fs.existsSync(DEJAVU))
    throw new Error(
      `${DEJAVU} is missing: the Greek and Arabic documents embed it (apt-get install fonts-dejavu-core)`,
    );
  return fs.readFileSync(DEJAVU);
}

export const GREEK = 'Η γρήγορη καφέ αλεπού πηδά';
export const ARABIC = 'مرحبا بالعالم';

/**
 * Greek and Arabic in an embedded (subset) DejaVu Sans. The font's layout shapes the Arabic and
 * writes its glyphs in visual order (right to left on the page), as PDF producers do.
 */
export async function greekAndArabic(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.registerFontkit(fontkit);
  const font = await doc.embedFont(dejavu(), { subset: true });
  const page = doc.addPage(A4);
  page.drawText(GREEK, { x: 50, y: 780, size: 12, font });
  page.drawText(ARABIC, { x: 50, y: 750, size: 12, font });
  return save(doc);
}

/** Info dictionary and an XMP packet that says other things, and a language. */
export async function withMetadata(opts: { xmp: boolean }): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  const page = doc.addPage(A4);
  draw(page, font, [{ text: 'A document with metadata.', x: 50, y: 780, size: 11 }]);
  doc.setTitle('Info Title');
  doc.setAuthor('Info Author');
  doc.setSubject('Info subject line');
  doc.setCreationDate(new Date('2021-03-04T05:06:07Z'));
  doc.setLanguage('de-DE');
  if (opts.xmp) {
    const xmp = `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">XMP Title &amp; Übersicht</rdf:li></rdf:Alt></dc:title>
<dc:creator><rdf:Seq><rdf:li>Ada Lovelace</rdf:li><rdf:li>Charles Babbage</rdf:li></rdf:Seq></dc:creator>
<dc:description><rdf:Alt><rdf:li xml:lang="x-default">XMP description</rdf:li></rdf:Alt></dc:description>
<dc:language><rdf:Bag><rdf:li>fr-FR</rdf:li></rdf:Bag></dc:language>
<xmp:CreateDate>2020-01-02T03:04:05+01:00</xmp:CreateDate>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`;
    const stream = doc.context.stream(new Uint8Array(Buffer.from(xmp, 'utf8')), {
      Type: 'Metadata',
      Subtype: 'XML',
    });
    doc.catalog.set(PDFName.of('Metadata'), doc.context.register(stream));
  }
  return save(doc);
}

/** A page with only an image on it (a scan): no text layer at all. */
export async function scan(pages = 2): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage(A4);
    const w = 64;
    const h = 64;
    const pixels = Buffer.alloc(w * h, 0);
    for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) & 0xff;
    const image = doc.context.register(
      doc.context.stream(pixels, {
        Type: 'XObject',
        Subtype: 'Image',
        Width: w,
        Height: h,
        ColorSpace: 'DeviceGray',
        BitsPerComponent: 8,
      }),
    );
    page.node.setXObject(PDFName.of('Im0'), image);
    const content = doc.context.register(doc.context.stream('q 495 0 0 742 50 50 cm /Im0 Do Q'));
    page.node.set(PDFName.of('Contents'), content);
  }
  return save(doc);
}

/** A document whose text says a page marker and markup of its own, to be written as text. */
export async function markupInText(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  const page = doc.addPage(A4);
  draw(page, font, [
    { text: '<!-- page 9 --> <b>bold</b> & "quoted"', x: 50, y: 780, size: 11 },
    { text: 'plain words between', x: 50, y: 766, size: 11 },
    { text: '# not a heading', x: 50, y: 736, size: 11 },
  ]);
  doc.setTitle(PDFString.of('Markup').asString());
  return save(doc);
}

export const CHINESE = '中文测试文本';

const hex4 = (cp: number) => cp.toString(16).toUpperCase().padStart(4, '0');

/**
 * Chinese in two fonts written by hand, neither needing a font file on the machine: STSong-Light
 * through the predefined CMap UniGB-UCS2-H (not embedded, as many Chinese producers write it: the
 * parser needs its bundled CMaps), and an Identity-H font whose codes mean something only through
 * its ToUnicode map.
 */
export async function chinese(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage(A4);
  const ctx = doc.context;
  const descriptor = (name: string) =>
    ctx.register(
      ctx.obj({
        Type: 'FontDescriptor',
        FontName: name,
        Flags: 6,
        FontBBox: [-25, -254, 1000, 880],
        ItalicAngle: 0,
        Ascent: 880,
        Descent: -120,
        CapHeight: 880,
        StemV: 93,
      }),
    );
  const song = ctx.obj({
    Type: 'Font',
    Subtype: 'Type0',
    BaseFont: 'STSong-Light-UniGB-UCS2-H',
    Encoding: 'UniGB-UCS2-H',
    DescendantFonts: [
      ctx.obj({
        Type: 'Font',
        Subtype: 'CIDFontType0',
        BaseFont: 'STSong-Light',
        CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('GB1'), Supplement: 4 },
        FontDescriptor: descriptor('STSong-Light'),
        DW: 1000,
      }),
    ],
  });
  const chars = [...CHINESE];
  const cmap = `/CIDInit /ProcSet findresource begin 12 dict begin begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def /CMapType 2 def
1 begincodespacerange <0000> <FFFF> endcodespacerange
${chars.length} beginbfchar
${chars.map((c, i) => `<${hex4(i + 1)}> <${hex4(c.codePointAt(0)!)}>`).join('\n')}
endbfchar
endcmap CMapName currentdict /CMap defineresource pop end end`;
  const identity = ctx.obj({
    Type: 'Font',
    Subtype: 'Type0',
    BaseFont: 'HandMade',
    Encoding: 'Identity-H',
    ToUnicode: ctx.register(ctx.stream(cmap)),
    DescendantFonts: [
      ctx.obj({
        Type: 'Font',
        Subtype: 'CIDFontType2',
        BaseFont: 'HandMade',
        CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 },
        FontDescriptor: descriptor('HandMade'),
        CIDToGIDMap: 'Identity',
        DW: 1000,
      }),
    ],
  });
  page.node.setFontDictionary(PDFName.of('FSong'), ctx.register(song));
  page.node.setFontDictionary(PDFName.of('FHand'), ctx.register(identity));
  const ucs2 = chars.map((c) => hex4(c.codePointAt(0)!)).join('');
  const cids = chars.map((_, i) => hex4(i + 1)).join('');
  const content = `BT /FSong 14 Tf 50 780 Td <${ucs2}> Tj ET\nBT /FHand 14 Tf 50 740 Td <${cids}> Tj ET`;
  page.node.set(PDFName.of('Contents'), ctx.register(ctx.stream(content)));
  return save(doc);
}

/** Paragraphs told apart by a first-line indent only (no gap), and a list lettered a), b). */
export async function indentsAndLetters(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await standard(doc);
  const page = doc.addPage(A4);
  const lines: Placed[] = [
    { text: 'The first paragraph opens here and runs on', x: 70, y: 780, size: 11 },
    { text: 'to a second line of its own.', x: 50, y: 766, size: 11 },
    { text: 'The second paragraph is indented like the first', x: 70, y: 752, size: 11 },
    { text: 'and ends on this line.', x: 50, y: 738, size: 11 },
    { text: 'a) apples', x: 50, y: 714, size: 11 },
    { text: 'b) pears', x: 50, y: 700, size: 11 },
  ];
  draw(page, font, lines);
  return save(doc);
}
