import { extractHtml } from '../../src/fetch/extract';
import { limitDepth } from '../../src/fetch/flatten';
import { truncateUtf8 } from '../../src/fetch/truncate';

describe('extraction of hostile pages', () => {
  const deep = (n: number) =>
    `<html><body>${'<div>'.repeat(n)}deep text${'</div>'.repeat(n)}<p>after</p></body></html>`;

  it.each(['text', 'markdown', 'html'] as const)(
    '100,000-deep nesting extracts as %s without overflowing',
    (format) => {
      const out = extractHtml(deep(100_000), 'http://x.test/', format).content;
      expect(out).toContain('deep text');
    },
  );

  it('unclosed tags nested 50,000 deep still extract', () => {
    const out = extractHtml(
      `<html><body>${'<div><span>'.repeat(50_000)}tail words`,
      'http://x.test/',
      'text',
    ).content;
    expect(out).toContain('tail words');
  });

  it('limitDepth leaves a shallow document byte for byte, and keeps text past the limit', () => {
    const shallow =
      '<!doctype html><html><body><p>a<p>b<ul><li>x<li>y</ul><script>if (a<b) {}</script></body></html>';
    expect(limitDepth(shallow, 10)).toBe(shallow);
    expect(limitDepth('<div><div><div><b>deep</b></div></div></div><i>x</i>', 2)).toBe(
      '<div><div>deep</div></div><i>x</i>',
    );
    // Omitted end tags of siblings do not count as nesting.
    const ps = `<body>${'<p>para'.repeat(1000)}</body>`;
    expect(limitDepth(ps, 5)).toBe(ps);
  });

  it('a single 2 MB line extracts whole', () => {
    const out = extractHtml(
      `<html><body><p>${'word '.repeat(400_000)}</p></body></html>`,
      'http://x.test/',
      'text',
    ).content;
    expect(out.length).toBe('word '.repeat(400_000).trim().length);
  });
});

describe('truncateUtf8', () => {
  it('never splits a character and reports the bytes kept', () => {
    const s = 'a€😀é';
    const bytes = Buffer.byteLength(s);
    for (let cap = 0; cap <= bytes + 1; cap++) {
      const r = truncateUtf8(s, cap);
      expect(r.bytes).toBeLessThanOrEqual(cap);
      expect(Buffer.byteLength(r.text)).toBe(r.bytes);
      expect(s.startsWith(r.text)).toBe(true);
      expect(r.text).not.toContain('\ufffd');
      expect(r.truncated).toBe(cap < bytes);
    }
  });
});
