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
    parser.write(decodeXml(bytes)).close();
  } catch (err) {
    if (err instanceof Enough) return;
    if (err instanceof ReadFailure) throw err;
    throw new ReadFailure(
      'unreadable',
      `${what} is not well-formed XML: ${String((err as Error).message).slice(0, 200)}`,
    );
  }
}

/** A part's text: UTF-16 when its byte-order mark says so, else UTF-8. */
function decodeXml(b: Buffer): string {
  if (b[0] === 0xff && b[1] === 0xfe) return new TextDecoder('utf-16le').decode(b);
  if (b[0] === 0xfe && b[1] === 0xff) return new TextDecoder('utf-16be').decode(b);
  return new TextDecoder('utf-8').decode(b);
}

/** An element's local name ("w:p" → "p"). */
export const local = (name: string): string => name.slice(name.indexOf(':') + 1);
