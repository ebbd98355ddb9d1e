import { extractHtml } from '../../src/extract/extract';
import type { Metadata } from '../../src/extract/metadata';
import { findCorpus, readabilityMetadataPages } from '../support/corpus';

/**
 * Metadata on the Readability corpus pages, against their expected-metadata.json: each field's
 * accuracy over the pages that name one (strings compared with whitespace and case folded, times
 * as instants).
 */
const corpus = findCorpus();
const describeCorpus = corpus ? describe : describe.skip;

const FIELDS: [Exclude<keyof Metadata, 'pages' | 'ocr'>, string, number][] = [
  // ours, theirs, floor
  ['author', 'byline', 0.78],
  ['description', 'excerpt', 0.95],
  ['site_name', 'siteName', 0.93],
  ['published_at', 'publishedTime', 0.95],
  ['language', 'lang', 0.95],
];

const norm = (s: unknown) =>
  typeof s === 'string'
    ? s
        .replace(/\s+/g, ' ')
        .trim()
        .toLowerCase()
        .replace(/^by\s+/, '')
    : null;

function same(field: Exclude<keyof Metadata, 'pages' | 'ocr'>, ours: string | null, theirs: string): boolean {
  if (ours === null) return false;
  if (field === 'published_at') return Date.parse(ours) === Date.parse(theirs);
  return norm(ours) === norm(theirs);
}

describeCorpus('metadata on the Readability corpus', () => {
  const pages = corpus ? readabilityMetadataPages(corpus) : [];
  const got = pages.map((p) => ({
    name: p.name,
    expected: p.expected,
    metadata: extractHtml(p.html, 'http://fakehost/test/page.html', 'text').metadata,
  }));

  it.each(FIELDS)('%s matches %s', (ours, theirs, floor) => {
    const named = got.filter((g) => typeof g.expected[theirs] === 'string' && g.expected[theirs] !== '');
    const right = named.filter((g) => same(ours, g.metadata[ours], g.expected[theirs] as string));
    const accuracy = right.length / named.length;
    const wrong = named
      .filter((g) => !right.includes(g))
      .slice(0, 5)
      .map((g) => `${g.name}: ${JSON.stringify(g.metadata[ours])} ≠ ${JSON.stringify(g.expected[theirs])}`);
    console.log(
      `metadata ${ours}: ${right.length}/${named.length} (${(accuracy * 100).toFixed(1)}%); e.g. ${wrong.join(' | ')}`,
    );
    expect(accuracy).toBeGreaterThanOrEqual(floor);
  });
});
