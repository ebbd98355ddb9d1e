import * as crypto from 'node:crypto';
import * as zlib from 'node:zlib';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';

/**
 * Documents made to hurt a parser: a deflate bomb, loops in the cross-reference chain and in the
 * page tree, a truncated file, an encrypted one, a million pages claimed, noise after `%PDF-`.
 * Those pdf-lib cannot write are written by hand (rawPdf).
 */

const latin1 = (s: string) => Buffer.from(s, 'latin1');

/**
 * A PDF from object bodies (object i+1 is bodies[i]; object 1 is the catalog), with a
 * cross-reference table and a trailer holding `trailer` besides /Size and /Root. `$XREF` in the
 * trailer is replaced by the table's own offset (for a /Prev that points at itself).
 */
export function rawPdf(bodies: (string | Buffer)[], trailer = ''): Buffer {
  const parts: Buffer[] = [latin1('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n')];
  let at = parts[0].length;
  const offsets: number[] = [];
  bodies.forEach((body, i) => {
    offsets.push(at);
    const obj = Buffer.concat([
      latin1(`${i + 1} 0 obj\n`),
      typeof body === 'string' ? latin1(body) : body,
      latin1('\nendobj\n'),
    ]);
    parts.push(obj);
    at += obj.length;
  });
  const xref = at;
  const rows = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  const tail = trailer.replace('$XREF', String(xref));
  parts.push(
    latin1(
      `xref\n0 ${bodies.length + 1}\n0000000000 65535 f \n${rows}trailer\n<< /Size ${bodies.length + 1} /Root 1 0 R ${tail} >>\nstartxref\n${xref}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}

const stream = (content: string, dict = '') =>
  `<< /Length ${Buffer.byteLength(content, 'latin1')} ${dict} >>\nstream\n${content}\nendstream`;
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
const textPage = (parent: number, contents: number, font: number) =>
  `<< /Type /Page /Parent ${parent} 0 R /MediaBox [0 0 595 842] /Contents ${contents} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`;
const text = (s: string) => `BT /F1 12 Tf 50 780 Td (${s}) Tj ET`;

/**
 * One page whose content is a short line of text and then one stream that inflates to `mb` MiB:
 * of text operators (`text`, about 0.9 MB of file for 300 MiB) or of spaces (`blank`).
 */
export async function deflateBomb(kind: 'text' | 'blank', mb = 300): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText('Before the bomb', { x: 50, y: 800, size: 12, font });
  const key = page.node
    .Resources()!
    .lookup(PDFName.of('Font'))!
    .toString()
    .match(/\/([^\s]+)/)![1];
  const unit =
    kind === 'text'
      ? latin1(`BT /${key} 12 Tf 50 700 Td (Bomb text again) Tj ET\n`.repeat(1000))
      : Buffer.alloc(1 << 20, 0x20);
  const deflate = zlib.createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  for (let n = 0; n < mb * (1 << 20); n += unit.length) {
    if (!deflate.write(unit)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  const bomb = doc.context.register(doc.context.stream(Buffer.concat(chunks), { Filter: 'FlateDecode' }));
  page.node.set(PDFName.of('Contents'), doc.context.obj([page.node.get(PDFName.of('Contents'))!, bomb]));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** A page of text whose cross-reference table names itself as the previous one (/Prev). */
export function cyclicXref(): Buffer {
  return rawPdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      textPage(2, 4, 5),
      stream(text('Cyclic xref page')),
      FONT,
    ],
    '/Prev $XREF',
  );
}

/** A page tree whose second kid is the tree itself. */
export function cyclicPages(): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>',
    textPage(2, 4, 5),
    stream(text('Cyclic tree page')),
    FONT,
  ]);
}

/** A page tree that claims a million pages and has one. */
export function millionPages(): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1000000 >>',
    textPage(2, 4, 5),
    stream(text('The only page')),
    FONT,
  ]);
}

/**
 * An encrypted document that needs a password: the standard handler (RC4, revision 2) with
 * owner and user entries that no empty password opens.
 */
export function encryptedDocument(): Buffer {
  const hex = (n: number) => crypto.randomBytes(n).toString('hex');
  return rawPdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      textPage(2, 4, 5),
      stream(text('Secret')),
      FONT,
      `<< /Filter /Standard /V 1 /R 2 /O <${hex(32)}> /U <${hex(32)}> /P -44 >>`,
    ],
    `/Encrypt 6 0 R /ID [<${hex(16)}> <${hex(16)}>]`,
  );
}

/** `%PDF-1.7` and then bytes that are no PDF at all. */
export function notPdf(): Buffer {
  const noise = Buffer.alloc(64 * 1024);
  let x = 12345;
  for (let i = 0; i < noise.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    noise[i] = x >>> 24;
  }
  return Buffer.concat([latin1('%PDF-1.7\n'), noise]);
}

/**
 * `pages` pages sharing one deflated content stream of `ops` operators that draw nothing (`q Q`,
 * a graphics state saved and restored): a small file (about 80 KB for 500 pages of 60,000) that
 * holds a parser for as long as it is let, each page costing well under the time a page may take.
 */
export function idleOperators(pages = 500, ops = 60_000): Buffer {
  const content = zlib.deflateSync(latin1('q Q\n'.repeat(ops / 2)));
  const kids = Array.from({ length: pages }, (_, i) => `${i + 4} 0 R`).join(' ');
  const page = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 3 0 R /Resources << >> >>`;
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    Buffer.concat([
      latin1(`<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`),
      content,
      latin1('\nendstream'),
    ]),
    ...Array.from({ length: pages }, () => page),
  ]);
}
