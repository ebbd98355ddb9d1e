import { SizedLru } from '../common/sized-lru';
import type { FetchEnvelope } from './fetch.service';

/**
 * The JSON of an envelope, `content` last. `contentJson` is JSON.stringify(envelope.content) when
 * the caller already has it.
 */
export function envelopeJson(envelope: FetchEnvelope, contentJson?: string): string {
  const { content, ...rest } = envelope;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)},"content":${contentJson ?? JSON.stringify(content)}}`;
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
