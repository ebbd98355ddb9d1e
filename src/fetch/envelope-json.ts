import { randomUUID } from 'node:crypto';
import { SizedLru } from '../common/sized-lru';
import type { FetchEnvelope } from './envelope';

/** Stands where the content goes; no page holds it (a NUL and a per-process random id). */
const MARK = `\u0000${randomUUID()}`;
const MARK_JSON = JSON.stringify(MARK);

/**
 * JSON.stringify(envelope), byte for byte, with the escaped content given: `contentJson` is
 * JSON.stringify(envelope.content), kept from an earlier answer. Every other field is written as
 * it is, so a field added to the envelope is in cached answers too.
 */
export function envelopeJson(envelope: FetchEnvelope, contentJson: string): string {
  const json = JSON.stringify({ ...envelope, content: MARK });
  const at = json.indexOf(MARK_JSON);
  return `${json.slice(0, at)}${contentJson}${json.slice(at + MARK_JSON.length)}`;
}

/**
 * The escaped JSON form of contents served more than once, by digest: escaping a page is most of
 * the cost of answering a cache hit. The digest names the content, so an entry never goes stale.
 */
export class ContentJsonMemo {
  private readonly memo: SizedLru<string>;

  constructor(maxBytes: number) {
    this.memo = new SizedLru(maxBytes, (json) => json.length * 2);
  }

  get(digest: string, content: string): string {
    let json = this.memo.get(digest);
    if (json === undefined) {
      json = JSON.stringify(content);
      this.memo.set(digest, json);
    }
    return json;
  }
}
