import * as fs from 'node:fs';
import * as path from 'node:path';
import { extractHtml } from '../../src/extract/extract';
import { verdictOf, wordCount, type Verdict } from '../../src/extract/verdict';
import { articlePages, findCorpus, readabilityPages } from '../support/corpus';

/** The verdict of a page as the PageService gives it: its text extracted, then judged. */
function judge(html: string, url: string): Verdict {
  const x = extractHtml(html, url, 'text');
  return verdictOf({ status: 200, html, title: x.title, content: x.content, isHtml: true });
}

const SET = path.join(__dirname, '..', 'fixtures', 'verdicts');

/**
 * A labelled set of challenge and interstitial pages, "not found" pages served with 200,
 * JavaScript-only shells and ordinary pages (test/fixtures/verdicts, written after the public
 * patterns of such pages), and the shared corpus of real articles, none of which may be flagged.
 */
describe('verdicts', () => {
  const pages = fs.readdirSync(SET).flatMap((label) =>
    fs.readdirSync(path.join(SET, label)).map((f) => ({
      label,
      name: `${label}/${f}`,
      verdict: judge(fs.readFileSync(path.join(SET, label, f), 'utf8'), `https://example.com/${f}`),
    })),
  );

  it.each(['challenge', 'not_found'])('precision and recall >= 0.95 for %s on the labelled set', (label) => {
    const tp = pages.filter((p) => p.label === label && p.verdict === label).length;
    const fp = pages.filter((p) => p.label !== label && p.verdict === label);
    const fn = pages.filter((p) => p.label === label && p.verdict !== label);
    const precision = tp / (tp + fp.length);
    const recall = tp / (tp + fn.length);
    console.log(
      `${label}: precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)} (${tp} of ${tp + fn.length}); wrongly flagged ${JSON.stringify(fp.map((p) => p.name))}, missed ${JSON.stringify(fn.map((p) => `${p.name} → ${p.verdict}`))}`,
    );
    expect(tp + fn.length).toBeGreaterThanOrEqual(15);
    expect(precision).toBeGreaterThanOrEqual(0.95);
    expect(recall).toBeGreaterThanOrEqual(0.95);
  });

  it('ordinary pages of the labelled set are ok', () => {
    expect(
      pages.filter((p) => p.label === 'ok' && p.verdict !== 'ok').map((p) => `${p.name} → ${p.verdict}`),
    ).toEqual([]);
  });

  it('status and size: error_page for 4xx/5xx, empty under 50 words, non-html never empty', () => {
    const base = { html: '<p>x</p>', title: 't', isHtml: true };
    expect(verdictOf({ ...base, status: 404, content: 'a '.repeat(500) })).toBe('error_page');
    expect(verdictOf({ ...base, status: 503, content: '' })).toBe('error_page');
    expect(verdictOf({ ...base, status: 200, content: 'word '.repeat(49) })).toBe('empty');
    expect(verdictOf({ ...base, status: 200, content: 'word '.repeat(50) })).toBe('ok');
    expect(verdictOf({ ...base, status: 200, content: '{"ok":true}', isHtml: false })).toBe('ok');
  });

  const corpus = findCorpus();
  (corpus ? it : it.skip)('no page of the shared corpus is flagged challenge or not_found', () => {
    const all = [
      ...articlePages(corpus!).map((p) => ({ name: p.id, html: p.html, url: p.url })),
      ...readabilityPages(corpus!).map((p) => ({
        name: p.name,
        html: p.html,
        url: 'http://fakehost/test/page.html',
      })),
    ];
    expect(all.length).toBe(156);
    const flagged = all
      .map((p) => ({ name: p.name, verdict: judge(p.html, p.url) }))
      .filter((p) => p.verdict === 'challenge' || p.verdict === 'not_found');
    console.log(`corpus: ${flagged.length} of ${all.length} flagged challenge or not_found`);
    expect(flagged).toEqual([]);
  });
});

describe('wordCount', () => {
  it('counts letters-and-digits runs, skips tags when asked, and stops at the cap', () => {
    expect(wordCount('Don’t stop: 3 words, café!')).toBe(6);
    expect(wordCount('<p>ab<i>cd</i> e</p>', Infinity, true)).toBe(3);
    expect(wordCount('<p>ab<i>cd</i> e</p>')).toBe(7);
    expect(wordCount('word '.repeat(5000), 201)).toBe(201);
    expect(wordCount('x <unclosed y', Infinity, true)).toBe(3);
  });
});
