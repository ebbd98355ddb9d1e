/** Turns fetched bytes into text: charset from the header, a BOM or <meta>, UTF-8 otherwise. */

const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)/i;

export function mediaType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

function headerCharset(contentType: string): string | undefined {
  const m = /charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType);
  return m?.[1];
}

function decoderFor(label: string | undefined): TextDecoder | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label.toLowerCase());
  } catch {
    return undefined; // an unknown label: fall through to the next source
  }
}

export function decodeBody(body: Buffer, contentType: string, isHtml: boolean): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return new TextDecoder('utf-8').decode(body);
  if (body[0] === 0xfe && body[1] === 0xff) return new TextDecoder('utf-16be').decode(body);
  if (body[0] === 0xff && body[1] === 0xfe) return new TextDecoder('utf-16le').decode(body);
  let dec = decoderFor(headerCharset(contentType));
  if (!dec && isHtml) {
    const head = body.subarray(0, 4096).toString('latin1');
    dec = decoderFor(META_CHARSET.exec(head)?.[1]);
  }
  return (dec ?? new TextDecoder('utf-8')).decode(body);
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
