import { randomUUID } from 'node:crypto';
import { SizedLru } from '../common/sized-lru';
import type { FetchEnvelope } from './envelope';

/** Stands where the content goes; no page holds it (a NUL and a per-process random id). */
const MARK = `\u0000${randomUUID()}`;
const MARK_JSON = JSON.stringify(MARK);

/**
 * The UTF-8 bytes of JSON.stringify(envelope), byte for byte, with the content given already
 * escaped and encoded: `contentJson` is the UTF-8 of JSON.stringify(envelope.content), kept from an
 * earlier answer. Every other field is written as it is, so a field added to the envelope is in
 * cached answers too.
 */
export function envelopeBytes(envelope: FetchEnvelope, contentJson: Buffer): Buffer {
  const json = JSON.stringify({ ...envelope, content: MARK });
  const at = json.indexOf(MARK_JSON);
  const head = json.slice(0, at);
  const tail = json.slice(at + MARK_JSON.length);
  const headBytes = Buffer.byteLength(head);
  const out = Buffer.allocUnsafe(headBytes + contentJson.length + Buffer.byteLength(tail));
  out.write(head, 0);
  contentJson.copy(out, headBytes);
  out.write(tail, headBytes + contentJson.length);
  return out;
}

/**
 * The escaped JSON form of contents served more than once, as UTF-8, by digest: escaping and
 * encoding a page is most of the cost of answering a cache hit. The digest names the content, so
 * an entry never goes stale.
 */
export class ContentJsonMemo {
  private readonly memo: SizedLru<Buffer>;

  constructor(maxBytes: number) {
    this.memo = new SizedLru(maxBytes, (json) => json.length);
  }

  get(digest: string, content: string): Buffer {
    let json = this.memo.get(digest);
    if (json === undefined) {
      json = Buffer.from(JSON.stringify(content));
      this.memo.set(digest, json);
    }
    return json;
  }
}
