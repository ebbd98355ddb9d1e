// An upstream answer read: its headers, its Retry-After, its body through the content-encoding.
import { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import type { Dispatcher } from 'undici';
import { FetchError } from '../common/errors';
import { capFor, mayBePdf, startsAsPdf } from './decode';

/** Retry-After as seconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(v: string | undefined, nowMs = Date.now()): number | undefined {
  if (!v) return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - nowMs) / 1000));
}

export function header(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Reads the body through its content-encoding (gzip, br, deflate), stopping at `cap` on the decoded
 * size (too_large), or cutting it at `truncateAt` bytes when given. With `caps`, the cap is the
 * page's or, for a PDF (by its type, or by its first bytes when the type says nothing), the
 * document's.
 */
export async function readBody(
  res: Dispatcher.ResponseData,
  {
    signal,
    cap: given,
    caps,
    truncateAt,
  }: { signal: AbortSignal; cap?: number; caps?: { page: number; document: number }; truncateAt?: number },
): Promise<Buffer> {
  const type = header(res.headers, 'content-type') ?? '';
  let cap = caps ? capFor(type, caps) : (given ?? 0);
  // Only the first bytes tell whether an opaque type is a PDF: until then the larger cap holds.
  let sniff = caps !== undefined && mayBePdf(type);
  let head = Buffer.alloc(0);
  const declared = Number(header(res.headers, 'content-length') ?? NaN);
  const encoding = (header(res.headers, 'content-encoding') ?? '').trim().toLowerCase();
  if (!encoding && declared > cap && truncateAt === undefined) {
    res.body.destroy();
    throw new FetchError('too_large', `the page declares ${declared} bytes, over the ${cap}-byte cap`);
  }
  let stream: Readable = res.body;
  if (encoding === 'gzip' || encoding === 'x-gzip') stream = res.body.pipe(zlib.createGunzip());
  else if (encoding === 'br') stream = res.body.pipe(zlib.createBrotliDecompress());
  else if (encoding === 'deflate') stream = res.body.pipe(zlib.createInflate());
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      if (sniff && caps) {
        head = Buffer.concat([head, (chunk as Buffer).subarray(0, 5)]);
        if (head.length >= 5) {
          sniff = false;
          cap = startsAsPdf(head) ? caps.document : caps.page;
        }
      }
      size += (chunk as Buffer).length;
      if (truncateAt !== undefined && size >= truncateAt) {
        chunks.push((chunk as Buffer).subarray(0, (chunk as Buffer).length - (size - truncateAt)));
        break;
      }
      if (size > cap) {
        throw new FetchError('too_large', `the page is over the ${cap}-byte cap once decoded`);
      }
      chunks.push(chunk as Buffer);
      if (signal.aborted) break;
    }
  } finally {
    res.body.destroy();
    if (stream !== res.body) stream.destroy();
  }
  signal.throwIfAborted();
  return Buffer.concat(chunks);
}
