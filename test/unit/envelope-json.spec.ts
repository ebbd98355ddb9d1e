import fc from 'fast-check';
import { ContentJsonMemo, envelopeBytes } from '../../src/fetch/envelope-json';
import type { FetchEnvelope } from '../../src/fetch/envelope';
import { VERDICTS } from '../../src/fetch/verdict';

describe('envelope JSON', () => {
  const envelopes: fc.Arbitrary<FetchEnvelope> = fc.record({
    url: fc.webUrl(),
    final_url: fc.webUrl(),
    status: fc.integer({ min: 100, max: 599 }),
    content_type: fc.string(),
    title: fc.string({ unit: 'grapheme' }),
    format: fc.constantFrom('markdown', 'text', 'html'),
    content: fc.string({ unit: 'binary' }),
    bytes: fc.nat(),
    truncated: fc.boolean(),
    cached: fc.boolean(),
    revalidated: fc.boolean(),
    verdict: fc.constantFrom(...VERDICTS),
    fetched_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    digest: fc.stringMatching(/^sha256:[0-9a-f]{64}$/),
    metadata: fc.record({
      author: fc.option(fc.string({ unit: 'grapheme' })),
      published_at: fc.option(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
      language: fc.option(fc.string()),
      site_name: fc.option(fc.string({ unit: 'grapheme' })),
      description: fc.option(fc.string({ unit: 'binary' })),
      canonical_url: fc.option(fc.webUrl()),
      image: fc.option(fc.webUrl()),
    }),
  });

  const bytesOf = (e: FetchEnvelope) => envelopeBytes(e, Buffer.from(JSON.stringify(e.content)));

  it('is the UTF-8 of JSON.stringify(envelope), byte for byte, whatever the fields hold', () => {
    fc.assert(
      fc.property(envelopes, (e) => {
        expect(bytesOf(e).equals(Buffer.from(JSON.stringify(e)))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('carries fields added to the envelope, wherever they sit and whatever they hold', () => {
    // A field the envelope does not have today (a verdict, metadata with its own "content"…) is
    // in the cached answer exactly as JSON.stringify writes it in a fresh one.
    const extra = fc.dictionary(
      fc.oneof(fc.constantFrom('verdict', 'metadata', 'content_json', 'links'), fc.string()),
      fc.jsonValue(),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(envelopes, extra, fc.boolean(), (e, more, before) => {
        const added = Object.fromEntries(Object.entries(more).filter(([k]) => k !== 'content'));
        const grown = (before ? { ...added, ...e } : { ...e, ...added }) as FetchEnvelope;
        expect(bytesOf(grown).toString()).toBe(JSON.stringify(grown));
      }),
      { numRuns: 500 },
    );
  });

  it('the memo gives each digest the escaped and encoded form of its own content, within its budget', () => {
    const memo = new ContentJsonMemo(8 * 1024);
    const pages = Array.from({ length: 50 }, (_, i) => ({
      digest: `d${i}`,
      content: `"page ${i}"\n€${'x'.repeat(i * 10)}`,
    }));
    for (let round = 0; round < 3; round++) {
      for (const p of pages) expect(memo.get(p.digest, p.content).toString()).toBe(JSON.stringify(p.content));
    }
  });
});
