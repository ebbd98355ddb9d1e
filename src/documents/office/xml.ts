import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { ReadFailure } from '../read-failure';

/** Thrown by a handler that has read enough of a part: the rest is not parsed. */
export class Enough extends Error {}

/** What a part's reader does with its elements and text, as they come. */
export interface XmlHandlers {
  open?(name: string, attrs: Record<string, string>): void;
  close?(name: string): void;
  text?(t: string): void;
}

/**
 * Reads one XML part as a stream of elements and text, by saxes (strict XML, no DTD). A DOCTYPE is
 * refused outright: Office, OpenDocument and EPUB parts have none, and it is where entity tricks
 * (a billion laughs, an external entity naming a local file) live; saxes never expands or fetches
 * an entity it was not given, so an undeclared one is an error, not a read.
 */
export function readXml(bytes: Buffer, what: string, h: XmlHandlers): void {
  const parser = new SaxesParser();
  parser.on('doctype', () => {
    throw new ReadFailure('unreadable', `${what} has a DOCTYPE, which documents of this kind never have`);
  });
  if (h.open) {
    const open = h.open;
    parser.on('opentag', (t: SaxesTagPlain) => open(t.name, t.attributes as Record<string, string>));
  }
  if (h.close) {
    const close = h.close;
    parser.on('closetag', (t) => close(t.name));
  }
  if (h.text) parser.on('text', h.text);
  try {
    decodeInPieces(bytes, (s) => parser.write(s));
    parser.close();
  } catch (err) {
    if (err instanceof Enough) return;
    if (err instanceof ReadFailure) throw err;
    throw new ReadFailure(
      'unreadable',
      `${what} is not well-formed XML: ${String((err as Error).message).slice(0, 200)}`,
    );
  }
}

/** Bytes of a part decoded at a time: small enough that their text is one of V8's small strings. */
const PIECE_BYTES = 64 * 1024;

/**
 * A part's text given to `write` a piece at a time, as a streaming parser takes it: UTF-16 when its
 * byte-order mark says so, else UTF-8. One string of a whole part would be over 128 KB for many:
 * new memory that the kernel maps page by page as it is written (on the virtual machines sift was
 * measured on, 4.5 ms of the 21 an odt of 2,000 paragraphs took to read).
 */
export function decodeInPieces(bytes: Uint8Array, write: (s: string) => void): void {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)) {
    const decoder = new TextDecoder(b[0] === 0xff ? 'utf-16le' : 'utf-16be');
    for (let at = 0; at < b.length; at += PIECE_BYTES)
      write(decoder.decode(b.subarray(at, at + PIECE_BYTES), { stream: true }));
    return write(decoder.decode());
  }
  // UTF-8, cut between characters (not before a continuation byte), its byte-order mark left out.
  let start = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  while (start < b.length) {
    let end = Math.min(b.length, start + PIECE_BYTES);
    while (end < b.length && end > start + PIECE_BYTES - 4 && (b[end] & 0xc0) === 0x80) end--;
    write(b.toString('utf8', start, end));
    start = end;
  }
}

/** An element's local name ("w:p" → "p"). */
export const local = (name: string): string => name.slice(name.indexOf(':') + 1);
