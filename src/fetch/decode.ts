/** Turns fetched bytes into text: charset from a BOM, the header or <meta>, UTF-8 otherwise. */
import { decodeAs, encodingName } from './charsets';

const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)/i;

export function mediaType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

function headerCharset(contentType: string): string | undefined {
  const m = /charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType);
  return m?.[1];
}

/** The encoding a label names, or undefined for none (an unknown label: the next source is asked). */
function named(label: string | undefined, fromMeta = false): string | undefined {
  const name = label ? encodingName(label) : undefined;
  // The HTML prescan: a <meta> cannot make a page UTF-16 (it would not have been read), and
  // x-user-defined there means windows-1252.
  if (fromMeta && name?.startsWith('utf-16')) return 'utf-8';
  if (fromMeta && name === 'x-user-defined') return 'windows-1252';
  return name;
}

/** Text from bytes, in the WHATWG Encoding Standard's charsets (see charsets.ts). */
export function decodeBody(body: Buffer, contentType: string, isHtml: boolean): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return decodeAs('utf-8', body);
  if (body[0] === 0xfe && body[1] === 0xff) return decodeAs('utf-16be', body);
  if (body[0] === 0xff && body[1] === 0xfe) return decodeAs('utf-16le', body);
  let name = named(headerCharset(contentType));
  if (!name && isHtml) {
    const head = body.subarray(0, 4096).toString('latin1');
    name = named(META_CHARSET.exec(head)?.[1], true);
  }
  return decodeAs(name ?? 'utf-8', body);
}

export type PageKind = 'html' | 'text' | 'json';

/** What sift does with a media type; undefined when it does not handle it. */
export function pageKind(contentType: string, body: Buffer): PageKind | undefined {
  const t = mediaType(contentType);
  if (t === 'text/html' || t === 'application/xhtml+xml') return 'html';
  if (t === 'application/json' || t.endsWith('+json')) return 'json';
  if (t === 'text/plain' || t === 'text/markdown' || t === 'text/csv' || t === 'text/x-markdown')
    return 'text';
  if (t === '') {
    const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
    if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'html';
    if (!body.subarray(0, 4096).includes(0)) return 'text';
  }
  return undefined;
}
