import {
  CrawlScope,
  MAX_GLOB_CHARS,
  MAX_GLOB_PATH,
  globProblem,
  type ScopeSpec,
} from '../../src/crawl/scope';
import {
  MAX_REGEX_CHARS,
  MAX_REGEX_PROGRAM,
  regexListProblem,
  regexProblem,
} from '../../src/crawl/path-regex';

const allows = (spec: Partial<ScopeSpec>, url: string) =>
  new CrawlScope({ seed: 'https://example.com/docs/', ...spec }).allows(new URL(url));

describe('CrawlScope: which discovered links a crawl follows', () => {
  it('the seed host, with or without www., over http or https, on any port', () => {
    for (const url of [
      'https://example.com/a',
      'http://example.com/a',
      'https://www.example.com/a',
      'https://EXAMPLE.com./a',
      'https://example.com:8443/a',
    ])
      expect(allows({}, url)).toBe(true);
    expect(allows({ seed: 'https://www.example.com/' }, 'https://example.com/a')).toBe(true);
    for (const url of [
      'https://docs.example.com/a',
      'https://www.www.example.com/a',
      'https://notexample.com/a',
      'https://example.com.evil.test/a',
      'https://other.test/a',
      'ftp://example.com/a',
    ])
      expect(allows({}, url)).toBe(false);
  });

  it('allowSubdomains takes any host under the seed name (less its www.); allowExternal takes any host', () => {
    const sub = { seed: 'https://www.example.com/', allowSubdomains: true };
    expect(allows(sub, 'https://docs.example.com/a')).toBe(true);
    expect(allows(sub, 'https://a.b.example.com/a')).toBe(true);
    expect(allows(sub, 'https://example.com/a')).toBe(true);
    expect(allows(sub, 'https://badexample.com/a')).toBe(false);
    expect(allows(sub, 'https://other.test/a')).toBe(false);
    expect(allows({ allowExternal: true }, 'https://other.test/a')).toBe(true);
    expect(allows({ allowExternal: true }, 'mailto:a@other.test')).toBe(false);
  });

  it('pathPrefix: only paths that start with it, and the globs besides (both must hold)', () => {
    const guide = { seed: 'https://example.com/docs/guide/', pathPrefix: '/docs/guide/' };
    for (const path of ['/docs/guide/', '/docs/guide', '/docs/guide/one', '/docs/guide/a/b.html?x=1'])
      expect(allows(guide, `https://example.com${path}`)).toBe(true);
    for (const path of ['/docs/', '/docs/guides', '/docs/api/', '/', '/other/docs/guide/'])
      expect(allows(guide, `https://example.com${path}`)).toBe(false);
    expect(allows({ ...guide, includePaths: ['*.html'] }, 'https://example.com/docs/guide/a.html')).toBe(
      true,
    );
    expect(allows({ ...guide, includePaths: ['*.html'] }, 'https://example.com/docs/a.html')).toBe(false);
    expect(
      allows({ ...guide, excludePaths: ['/docs/guide/old/**'] }, 'https://example.com/docs/guide/old/x'),
    ).toBe(false);
  });

  it('include globs: the path must match one', () => {
    const inc = { includePaths: ['/docs/**', '/blog/*'] };
    expect(allows(inc, 'https://example.com/docs')).toBe(true);
    expect(allows(inc, 'https://example.com/docs/')).toBe(true);
    expect(allows(inc, 'https://example.com/docs/a/b/c.html')).toBe(true);
    expect(allows(inc, 'https://example.com/blog/post')).toBe(true);
    expect(allows(inc, 'https://example.com/blog/post/')).toBe(true);
    expect(allows(inc, 'https://example.com/blog/2024/post')).toBe(false);
    expect(allows(inc, 'https://example.com/docsx')).toBe(false);
    expect(allows(inc, 'https://example.com/')).toBe(false);
    expect(allows(inc, 'https://example.com/Docs/a')).toBe(false);
    // The query is not part of the path.
    expect(allows(inc, 'https://example.com/other?next=/docs/a')).toBe(false);
    // A host out of scope stays out whatever the path.
    expect(allows(inc, 'https://other.test/docs/a')).toBe(false);
  });

  it('exclude globs: the path must match none; they win over includes', () => {
    const spec = { includePaths: ['/docs/**'], excludePaths: ['/docs/old/**', '*.pdf'] };
    expect(allows(spec, 'https://example.com/docs/new')).toBe(true);
    expect(allows(spec, 'https://example.com/docs/old')).toBe(false);
    expect(allows(spec, 'https://example.com/docs/old/x')).toBe(false);
    expect(allows(spec, 'https://example.com/docs/manual.pdf')).toBe(false);
    expect(allows(spec, 'https://example.com/docs/manual.pdfx')).toBe(true);
    expect(allows({ excludePaths: ['/private/*'] }, 'https://example.com/anything')).toBe(true);
    expect(allows({ excludePaths: ['/private/*'] }, 'https://example.com/private/x')).toBe(false);
  });

  it('globs starting with * : without / the last segment, with / the path less its leading /', () => {
    expect(allows({ includePaths: ['*.html'] }, 'https://example.com/a/b/c.html')).toBe(true);
    expect(allows({ includePaths: ['*.html'] }, 'https://example.com/c.html')).toBe(true);
    expect(allows({ includePaths: ['*.html'] }, 'https://example.com/c.html/d')).toBe(false);
    expect(allows({ includePaths: ['*/docs/**'] }, 'https://example.com/en/docs/a')).toBe(true);
    expect(allows({ includePaths: ['*/docs/**'] }, 'https://example.com/docs/a')).toBe(false);
    expect(allows({ includePaths: ['**/docs/**'] }, 'https://example.com/docs/a')).toBe(true);
    expect(allows({ includePaths: ['**/docs/**'] }, 'https://example.com/x/y/docs/a')).toBe(true);
  });

  it('dot segments match; paths are matched as escaped in the URL; braces alternate, extglobs are literal', () => {
    expect(allows({ includePaths: ['/.well-known/**'] }, 'https://example.com/.well-known/x')).toBe(true);
    expect(allows({ includePaths: ['/a%20b/*'] }, 'https://example.com/a b/c')).toBe(true);
    expect(allows({ includePaths: ['/{en,fr}/**'] }, 'https://example.com/fr/x')).toBe(true);
    expect(allows({ includePaths: ['/{en,fr}/**'] }, 'https://example.com/de/x')).toBe(false);
    expect(allows({ includePaths: ['/x/+(a|b)'] }, 'https://example.com/x/a')).toBe(false);
  });

  it(`a path over ${MAX_GLOB_PATH} characters is out of scope once any glob is given`, () => {
    const long = `https://example.com/docs/${'a'.repeat(MAX_GLOB_PATH)}`;
    expect(allows({}, long)).toBe(true);
    expect(allows({ includePaths: ['/docs/**'] }, long)).toBe(false);
    expect(allows({ excludePaths: ['/nothing'] }, long)).toBe(false);
  });

  it('a hostile path against globs full of wildcards is matched in one pass', () => {
    const scope = new CrawlScope({
      seed: 'https://example.com/',
      includePaths: ['/*a*a*a*a*z', '/**/a/**/a/**/a/**/z'],
    });
    // A backtracking matcher took minutes over these: one step per wildcard and character here.
    expect(scope.allows(new URL(`https://example.com/${'a'.repeat(MAX_GLOB_PATH - 1)}`))).toBe(false);
    expect(scope.allows(new URL(`https://example.com/${'a/'.repeat(MAX_GLOB_PATH / 2 - 1)}`))).toBe(false);
    expect(scope.allows(new URL(`https://example.com/${'a'.repeat(MAX_GLOB_PATH - 2)}z`))).toBe(true);
  });
});

describe('globProblem', () => {
  it('accepts paths and leading-* globs', () => {
    for (const g of [
      '/docs/**',
      '/blog/*',
      '*.pdf',
      '**/docs/**',
      '/a/*/b/*/c/*',
      '/docs/**/*.md',
      '/',
      '/{a,b}/x?y/[0-9]',
    ])
      expect(globProblem(g)).toBeUndefined();
  });

  it('refuses what would be a 400, saying why', () => {
    expect(globProblem('docs/**')).toMatch(/must start with "\/"/);
    expect(globProblem('!/docs/**')).toMatch(/must start with/);
    expect(globProblem('')).toMatch(/must start with/);
    expect(globProblem('/a\0b')).toMatch(/NUL/);
    expect(globProblem(`/${'a'.repeat(MAX_GLOB_CHARS)}`)).toMatch(/at most 512 characters/);
    expect(globProblem(`/${'a'.repeat(MAX_GLOB_CHARS - 1)}`)).toBeUndefined();
    expect(globProblem('/x/[b-a]')).toMatch(/does not parse/);
    // Wildcards are not counted one by one any more: their text is, over all the globs.
    for (const g of ['/**/docs/**/*.md', '/*a*b*', '*a*b*c']) expect(globProblem(g)).toBeUndefined();
    // A scope is never built on a glob refused here.
    expect(() => new CrawlScope({ seed: 'https://e.test/', excludePaths: ['docs/**'] })).toThrow(
      /must start with/,
    );
  });
});

describe("regular expressions on the path (Firecrawl's includePaths and excludePaths)", () => {
  it('an include pattern is searched for anywhere in the path; an exclude pattern leaves a path out', () => {
    const spec = { includeRegex: ['^/docs/guide/', 'faq'], excludeRegex: ['draft', '\\.pdf$'] };
    for (const [url, inScope] of [
      ['https://example.com/docs/guide/one', true],
      // A trailing slash either way: a crawl's canonical URL has none where the link had one.
      ['https://example.com/docs/guide', true],
      ['https://example.com/help/faq.html', true],
      ['https://example.com/docs/api/', false],
      ['https://example.com/x/docs/guide/', false],
      ['https://example.com/docs/guide/draft-2', false],
      ['https://example.com/docs/guide/print.pdf', false],
      // The path only: neither the query nor the host is searched.
      ['https://example.com/docs/?q=faq', false],
    ] as const)
      expect([url, allows(spec, url)]).toEqual([url, inScope]);
    // Excludes alone: every other path; with globs, both must hold.
    expect(allows({ excludeRegex: ['^/private'] }, 'https://example.com/public/a')).toBe(true);
    expect(allows({ excludeRegex: ['^/private'] }, 'https://example.com/private/a')).toBe(false);
    const both = { includePaths: ['/docs/**'], includeRegex: ['guide'] };
    expect(allows(both, 'https://example.com/docs/guide/a')).toBe(true);
    expect(allows(both, 'https://example.com/docs/api/a')).toBe(false);
    expect(allows(both, 'https://example.com/guide/a')).toBe(false);
    expect(allows({ includeRegex: ['a'] }, `https://example.com/${'a'.repeat(MAX_GLOB_PATH)}`)).toBe(false);
  });

  it('refuses, saying why, what would need a backtracker, is too long or would cost too much to run', () => {
    expect(regexProblem('^/(blog|news)/[0-9]{4}/')).toBeUndefined();
    expect(regexProblem('^/a(?=b)')).toMatch(/linear-time engine/);
    expect(regexProblem('(a)\\1')).toMatch(/linear-time engine/);
    expect(regexProblem('(unclosed')).toMatch(/not a regular expression/);
    expect(regexProblem('a'.repeat(MAX_REGEX_CHARS + 1))).toMatch(`at most ${MAX_REGEX_CHARS}`);
    const costly = `${'a.{0,9}'.repeat(7)}q`;
    expect(regexProblem(costly)).toBeUndefined();
    expect(regexListProblem([costly], [])).toMatch(`over ${MAX_REGEX_PROGRAM}`);
    expect(regexListProblem([`${'a.{0,9}'.repeat(5)}q`], ['^/x'])).toBeUndefined();
    expect(() => new CrawlScope({ seed: 'https://example.com/', excludeRegex: ['(?!x)'] })).toThrow(
      /linear-time engine/,
    );
  });
});
