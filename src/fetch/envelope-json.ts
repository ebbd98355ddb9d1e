import { SizedLru } from '../common/sized-lru';
import type { FetchEnvelope } from './fetch.service';

/**
 * JSON.stringify(envelope), byte for byte, with the escaped content given: `contentJson` is
 * JSON.stringify(envelope.content), kept from an earlier answer.
 */
export function envelopeJson(envelope: FetchEnvelope, contentJson: string): string {
  const { url, final_url, status, content_type, title, format, bytes, truncated } = envelope;
  const head = JSON.stringify({ url, final_url, status, content_type, title, format });
  const { cached, fetched_at, digest } = envelope;
  const tail = JSON.stringify({ bytes, truncated, cached, fetched_at, digest });
  return `${head.slice(0, -1)},"content":${contentJson},${tail.slice(1)}`;
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
