import { SizedLru } from '../common/sized-lru';
import type { FetchEnvelope } from './envelope';

/**
 * JSON.stringify(envelope), byte for byte, with the escaped content given: `contentJson` is
 * JSON.stringify(envelope.content), kept from an earlier answer. Every other field is written as
 * it is, so a field added to the envelope is in cached answers too.
 */
export function envelopeJson(envelope: FetchEnvelope, contentJson: string): string {
  // A number where the content goes: `"content":0` cannot occur inside a JSON string (its quotes
  // would be escaped), and content comes before any nested object, so the first match is it.
  const json = JSON.stringify({ ...envelope, content: 0 });
  const at = json.indexOf('"content":0');
  return `${json.slice(0, at + 10)}${contentJson}${json.slice(at + 11)}`;
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
