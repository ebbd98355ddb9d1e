import {
  MAX_SEARCHED_RULES,
  MAX_SITEMAPS,
  MAX_SITEMAP_CHARS,
  decidingRule,
  parseRobots,
} from '../../src/fetch/robots-rules';
import { normalHostname } from '../../src/common/urls';

const decide = (body: string, path: string) =>
  decidingRule(parseRobots(body, 'sift'), new URL(`http://s.test${path}`));

describe('robots.txt rules (RFC 9309), matched in linear time', () => {
  it('the longest match wins, Allow on a tie; * and a final $; the agent group, else *', () => {
    const body =
      'User-agent: *\nDisallow: /\n\nUser-agent: sift\nDisallow: /docs\nAllow: /docs/public\nDisallow: /*.pdf$\nDisallow: /tie\nAllow: /tie\n';
    expect(decide(body, '/docs/x')?.allow).toBe(false);
    expect(decide(body, '/docs/public/x')?.allow).toBe(true);
    expect(decide(body, '/a/b.pdf')?.allow).toBe(false);
    expect(decide(body, '/a/b.pdf?x=1')).toBeUndefined();
    expect(decide(body, '/tie')?.allow).toBe(true);
    expect(decide(body, '/other')).toBeUndefined();
    expect(decide('User-agent: other\nDisallow: /\n', '/x')).toBeUndefined();
  });

  it(`keeps at most ${MAX_SEARCHED_RULES} rules that search the path; past them a Disallow is cut at its first * and an Allow is dropped`, () => {
    const rules = Array.from(
      { length: MAX_SEARCHED_RULES + 50 },
      (_, i) => `Disallow: /*${'x'.repeat(39)}${i}`,
    );
    const allows = Array.from({ length: 10 }, (_, i) => `Allow: /*y${i}`);
    const parsed = parseRobots(`User-agent: *\n${rules.join('\n')}\n${allows.join('\n')}\n`, 'sift');
    const searching = parsed.rules.filter((r) => r.pieces.slice(1).some((p) => p !== ''));
    expect(searching).toHaveLength(MAX_SEARCHED_RULES);
    // The Allows came past the cap: dropped, so they allow nothing more than the file says.
    expect(parsed.rules.filter((r) => r.allow)).toHaveLength(0);
    // A Disallow past the cap disallows more, never less: its prefix before the first *.
    const cut = parsed.rules[MAX_SEARCHED_RULES];
    expect([cut.pieces, cut.allow, cut.line]).toEqual([['/'], false, MAX_SEARCHED_RULES + 2]);
    // So every path is disallowed (the cut rule keeps its length, and matches everything).
    expect(decidingRule(parsed, new URL('http://s.test/anything'))?.allow).toBe(false);
    // Within the cap, each rule decides as written.
    const within = parseRobots(`User-agent: *\n${rules.slice(0, 100).join('\n')}\n`, 'sift');
    expect(decidingRule(within, new URL(`http://s.test/a${'x'.repeat(39)}7`))?.line).toBe(9);
    expect(decidingRule(within, new URL('http://s.test/anything'))).toBeUndefined();
  });

  it('runs of stars are one star; a rule of thousands of them is matched in one pass', () => {
    const parsed = parseRobots(`User-agent: *\nDisallow: /a${'*'.repeat(10_000)}b$\n`, 'sift');
    expect(parsed.rules[0].pieces).toEqual(['/a', 'b']);
    expect(decidingRule(parsed, new URL(`http://s.test/a${'c'.repeat(8000)}b`))?.allow).toBe(false);
    expect(decidingRule(parsed, new URL(`http://s.test/a${'c'.repeat(8000)}`))).toBeUndefined();
  });
});

describe('Sitemap lines', () => {
  it('are kept from anywhere in the file, whatever the group, in order, trimmed; the rules are unchanged', () => {
    const body =
      'Sitemap: https://s.test/top.xml\nUser-agent: other\nSitemap:   https://s.test/in-other.xml.gz  # comment\nDisallow: /\n\n' +
      'User-agent: sift\nDisallow: /private\nSITEMAP: https://s.test/in-mine.txt\nsitemap:\n';
    const parsed = parseRobots(body, 'sift');
    expect(parsed.sitemaps).toEqual([
      'https://s.test/top.xml',
      'https://s.test/in-other.xml.gz',
      'https://s.test/in-mine.txt',
    ]);
    expect(decidingRule(parsed, new URL('http://s.test/private/x'))?.allow).toBe(false);
    expect(decidingRule(parsed, new URL('http://s.test/public'))).toBeUndefined();
    expect(parseRobots('User-agent: *\nDisallow: /x\n', 'sift').sitemaps).toEqual([]);
  });

  it(`keeps at most ${MAX_SITEMAPS}, each of at most ${MAX_SITEMAP_CHARS} characters, and counts them in bytes`, () => {
    const long = `https://s.test/${'a'.repeat(MAX_SITEMAP_CHARS)}`;
    const lines = Array.from({ length: MAX_SITEMAPS + 10 }, (_, i) => `Sitemap: https://s.test/${i}.xml`);
    const parsed = parseRobots(`Sitemap: ${long}\n${lines.join('\n')}\n`, 'sift');
    expect(parsed.sitemaps).toHaveLength(MAX_SITEMAPS);
    expect(parsed.sitemaps[0]).toBe('https://s.test/0.xml');
    expect(parsed.sitemaps.at(-1)).toBe(`https://s.test/${MAX_SITEMAPS - 1}.xml`);
    const none = parseRobots('', 'sift');
    expect(parsed.bytes).toBeGreaterThan(none.bytes + MAX_SITEMAPS * 2 * 'https://s.test/0.xml'.length);
  });
});

describe('normalHostname', () => {
  it('drops every trailing dot, however many, and nothing else', () => {
    expect(normalHostname('news.test.')).toBe('news.test');
    expect(normalHostname('news.test')).toBe('news.test');
    const long = `a${'.'.repeat(8000)}b`;
    expect(normalHostname(`${long}...`)).toBe(long);
    expect(normalHostname('...')).toBe('');
  });
});
