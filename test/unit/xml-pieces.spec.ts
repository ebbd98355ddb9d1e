import fc from 'fast-check';
import { decodeInPieces } from '../../src/documents/office/xml';
import { readOffice } from '../../src/documents/office/office-reader';
import { epubFile, odtFile } from '../support/office-files';

/**
 * A part's text is read a piece of 64 KB at a time (a whole part as one string is new memory on
 * every read): the pieces joined are the text a decoder gives for the whole, whatever the bytes,
 * wherever a character falls.
 */
const whole = (b: Uint8Array) => {
  const wide =
    b[0] === 0xff && b[1] === 0xfe ? 'utf-16le' : b[0] === 0xfe && b[1] === 0xff ? 'utf-16be' : 'utf-8';
  return new TextDecoder(wide).decode(b);
};
const joined = (b: Uint8Array) => {
  let out = '';
  decodeInPieces(b, (s) => (out += s));
  return out;
};

describe('a part decoded in pieces', () => {
  it('is the whole decoded: UTF-8 text, broken sequences, byte-order marks, past many pieces', () => {
    const unit = fc.oneof(
      fc.constant(Buffer.from('plain words ')),
      fc.constant(Buffer.from('Ελληνικά 日本語 \u{1F600} ')),
      fc.uint8Array({ minLength: 1, maxLength: 9 }).map((a) => Buffer.from(a)),
      fc.constant(Buffer.from([0xe6, 0x97])), // a character cut short
    );
    fc.assert(
      fc.property(
        fc.array(unit, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.constantFrom([], [0xef, 0xbb, 0xbf], [0xff, 0xfe], [0xfe, 0xff]),
        (units, times, bom) => {
          const body = Buffer.concat(units);
          const b = Buffer.concat([Buffer.from(bom), ...Array.from({ length: times }, () => body)]);
          expect(joined(b)).toBe(whole(b));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('an odt and an e-book of 200 KB of text with characters beyond ASCII read whole', () => {
    const line = (i: number) => `Ligne ${i}: Ελληνικά κείμενα, 日本語のテキスト \u{1F600}`;
    const n = 4000;
    const odt = readOffice(
      odtFile(Array.from({ length: n }, (_, i) => `<text:p>${line(i)}</text:p>`).join('')),
      16 << 20,
    );
    const epub = readOffice(
      epubFile(Array.from({ length: n }, (_, i) => `<p>${line(i)}</p>`).join('')),
      16 << 20,
    );
    for (const doc of [odt, epub]) {
      expect(Buffer.byteLength(doc.text)).toBeGreaterThan(200_000);
      expect(doc.text).not.toContain('\ufffd');
      for (const i of [0, 1234, n - 1]) expect(doc.text).toContain(line(i));
      expect(doc.text.split('\n\n').filter((p) => p.startsWith('Ligne '))).toHaveLength(n);
    }
  });
});
