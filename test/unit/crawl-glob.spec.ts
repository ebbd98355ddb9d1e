import picomatch from 'picomatch';
import { RE2JS } from 're2js';
import { globToRe2 } from '../../src/crawl/glob';
import {
  CrawlScope,
  MAX_GLOB_CHARS,
  MAX_GLOB_PATH,
  MAX_GLOB_TEXT,
  MAX_WILDCARD_TEXT,
  globListProblem,
  globProblem,
} from '../../src/crawl/scope';
import { prng } from '../support/prng';

const scopeOf = (include: string[], exclude: string[] = []) => {
  const scope = new CrawlScope({
    seed: 'https://example.com/',
    includePaths: include,
    excludePaths: exclude,
  });
  return (path: string) => scope.allows(new URL(`https://example.com${path}`));
};
const inScope = (include: string[], path: string, exclude: string[] = []) => scopeOf(include, exclude)(path);
const whole = (glob: string, path: string) => RE2JS.compile(globToRe2(glob), RE2JS.DOTALL).matches(path);

/**
 * What sift's globs meant when picomatch matched them: the options it ran with, the three ways a
 * glob was applied (CrawlScope's comment) and the trailing slash either way.
 */
const PICOMATCH = { dot: true, noextglob: true, nonegate: true, windows: false };
function picomatchScope(glob: string): (path: string) => boolean {
  const m = glob.startsWith('/')
    ? picomatch(glob, PICOMATCH)
    : !glob.includes('/')
      ? picomatch(`**/${glob}`, PICOMATCH)
      : (
          (inner) => (p: string) =>
            inner(p.slice(1))
        )(picomatch(glob, PICOMATCH));
  return (path) => {
    const alt = path === '/' ? path : path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    return m(path) || m(alt);
  };
}

describe('path globs in RE2 syntax', () => {
  it('* stays in a segment (a whole segment is at least one character), ? is one character but /', () => {
    expect(whole('/blog/*', '/blog/post')).toBe(true);
    expect(whole('/blog/*', '/blog/')).toBe(false);
    expect(whole('/blog/*', '/blog/a/b')).toBe(false);
    expect(whole('/a*b', '/ab')).toBe(true);
    expect(whole('/a*b', '/a/b')).toBe(false);
    expect(whole('/x?', '/xy')).toBe(true);
    expect(whole('/x?', '/x/')).toBe(false);
  });

  it('** crosses /: as a whole segment any number of segments, none included', () => {
    expect(whole('/docs/**', '/docs')).toBe(true);
    expect(whole('/docs/**', '/docs/a/b')).toBe(true);
    expect(whole('/docs/**', '/docsx')).toBe(false);
    expect(whole('/a/**/b', '/a/b')).toBe(true);
    expect(whole('/a/**/b', '/a/x/y/b')).toBe(true);
    expect(whole('/a/**/b', '/a/xb')).toBe(false);
    expect(whole('/a/**/**/b', '/a/b')).toBe(true);
    expect(whole('/docs**', '/docs/a/b')).toBe(true);
    expect(whole('/a**b', '/a/x/b')).toBe(true);
  });

  it('classes, negated classes (never /), ranges, POSIX names; alternatives that nest and hold wildcards', () => {
    expect(whole('/v[0-9]/x', '/v2/x')).toBe(true);
    expect(whole('/v[0-9]/x', '/vx/x')).toBe(false);
    expect(whole('/[]a]', '/]')).toBe(true);
    expect(whole('/[a-]', '/-')).toBe(true);
    expect(whole('/a[!b]c', '/axc')).toBe(true);
    expect(whole('/a[!b]c', '/abc')).toBe(false);
    expect(whole('/a[^b]c', '/a/c')).toBe(false);
    expect(whole('/[[:digit:]]x', '/7x')).toBe(true);
    expect(whole('/{en,fr}/**', '/fr/a')).toBe(true);
    expect(whole('/{en,fr}/**', '/de/a')).toBe(false);
    expect(whole('/{a,b{c,d}}/x', '/bd/x')).toBe(true);
    expect(whole('/{*.md,docs/**}', '/docs/a/b')).toBe(true);
    expect(whole('/{*.md,docs/**}', '/x/a.md')).toBe(false);
    expect(whole('/{a,}x', '/x')).toBe(true);
  });

  it('everything else is literal: regex characters, escapes, a [ or { never closed, braces without a comma', () => {
    for (const [glob, path] of [
      ['/a.b', '/a.b'],
      ['/a(b)|c$^+', '/a(b)|c$^+'],
      ['/x/\\*', '/x/*'],
      ['/x/[a', '/x/[a'],
      ['/x/{a,b', '/x/{a,b'],
      ['/x/{a}', '/x/{a}'],
      ['/x/{1..3}', '/x/{1..3}'],
      ['/x/+(a|b)', '/x/+(a|b)'],
      ['/caf\u00e9/\u{1f600}', '/caf\u00e9/\u{1f600}'],
    ])
      expect([glob, whole(glob, path)]).toEqual([glob, true]);
    expect(whole('/a.b', '/axb')).toBe(false);
    expect(whole('/x/\\*', '/x/y')).toBe(false);
    expect(whole('/x/{1..3}', '/x/2')).toBe(false);
  });

  it('means what picomatch meant for ordinary globs, over generated globs and paths', () => {
    const rnd = prng(36);
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
    const segments = [
      'a',
      'ab',
      'x.md',
      '*',
      '**',
      'a*',
      '*b',
      '*.md',
      '?',
      'a?',
      '[ab]',
      '[a-c]b',
      '{a,b}',
      '{a,bb}*',
    ];
    const names = ['a', 'b', 'ab', 'ba', 'bb', 'abb', 'x.md', 'c', 'aab', 'cb'];
    // Where picomatch was inconsistent, left out here and asserted below: a glob opening with
    // `/**/`, and the root against a glob starting with `*`.
    const globOf = (): string => {
      const segs = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(segments));
      const kind = rnd();
      if (kind < 0.6) return `/${segs[0] === '**' ? 'a' : segs[0]}/${segs.slice(1).join('/')}`;
      if (kind < 0.8) return pick(['*.md', '*b', '*a*', '*[ab]']);
      return `${pick(['*', '**'])}/${segs.join('/')}`;
    };
    const pathOf = () => {
      const segs = Array.from({ length: Math.floor(rnd() * 5) }, () => pick(names));
      return `/${segs.join('/')}${segs.length && rnd() < 0.3 ? '/' : ''}`;
    };
    let compared = 0;
    for (let g = 0; g < 400; g++) {
      const glob = globOf();
      const old = picomatchScope(glob);
      const now = scopeOf([glob]);
      for (let p = 0; p < 40; p++) {
        const path = pathOf();
        if (path === '/' && glob.startsWith('*')) continue;
        expect({ glob, path, matches: now(path) }).toEqual({ glob, path, matches: old(path) });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(14_000);
  });

  it('where picomatch was inconsistent, ** is any number of segments and * at least one character', () => {
    // picomatch took `/**/a` to need a segment before `a`, though `/x/**/a` took `/x/a`.
    expect(picomatchScope('/**/a')('/a')).toBe(false);
    expect(inScope(['/**/a'], '/a')).toBe(true);
    expect(inScope(['/**/a'], '/x/y/a')).toBe(true);
    // It took the root as a last segment `*` matched, and not as a path `**/**` matched.
    expect(picomatchScope('*')('/')).toBe(true);
    expect(inScope(['*'], '/')).toBe(false);
    expect(picomatchScope('**/**')('/')).toBe(false);
    expect(inScope(['**/**'], '/')).toBe(true);
  });

  it('every include and exclude glob in one automaton: any include, then no exclude', () => {
    const include = ['/docs/**', '*.pdf', '/blog/*'];
    const exclude = ['/docs/old/**', '*draft*'];
    expect(inScope(include, '/docs/a', exclude)).toBe(true);
    expect(inScope(include, '/x/y.pdf', exclude)).toBe(true);
    expect(inScope(include, '/blog/post/', exclude)).toBe(true);
    expect(inScope(include, '/docs/old/a', exclude)).toBe(false);
    expect(inScope(include, '/docs/a-draft', exclude)).toBe(false);
    expect(inScope(include, '/other', exclude)).toBe(false);
    expect(inScope([], '/other', exclude)).toBe(true);
    expect(inScope([], '/x/draft', exclude)).toBe(false);
  });

  it('a pathological glob and path are matched in one pass: the answers come back', () => {
    // Each backtracks over the path once per wildcard in a backtracking engine: picomatch took
    // minutes over the first. Nothing caps their wildcards now; their text is all that counts.
    const a = 'a'.repeat(MAX_GLOB_PATH - 1);
    const stars = `/${'*a'.repeat(20)}*z`;
    expect(globProblem(stars)).toBeUndefined();
    expect(inScope([stars], `/${a}`)).toBe(false);
    expect(inScope([stars], `/${a.slice(1)}z`)).toBe(true);
    const deep = `/**/${'a*/'.repeat(20)}**/z`;
    expect(inScope([deep], `/${'a/'.repeat(MAX_GLOB_PATH / 2 - 1)}`)).toBe(false);
    expect(inScope([deep], `/${'a/'.repeat(MAX_GLOB_PATH / 2 - 2)}z`)).toBe(true);
    const run = `/**${'a'.repeat(MAX_WILDCARD_TEXT - 4)}b`;
    expect(globListProblem([run], [])).toBeUndefined();
    expect(inScope([run], `/${a}`)).toBe(false);
    expect(inScope([run], `/${a.slice(1)}b`)).toBe(true);
  });

  it(`refuses what would be a 400, saying why; over both lists, ${MAX_WILDCARD_TEXT} characters of wildcard text and ${MAX_GLOB_TEXT} in all`, () => {
    expect(globProblem('/x/[z-a]')).toMatch(/does not parse: character range z-a is out of order/);
    expect(globProblem(`/${'a'.repeat(MAX_GLOB_CHARS)}`)).toMatch(/at most 512 characters/);
    // A long literal head costs one step a character: it does not count.
    expect(globListProblem([`/${'a'.repeat(MAX_GLOB_CHARS - 4)}/**`], [])).toBeUndefined();
    const half = `/a/*${'b'.repeat(MAX_WILDCARD_TEXT / 2 - 1)}`;
    expect(globListProblem([half], [half])).toBeUndefined();
    expect(globListProblem([half], [`${half}c`])).toBe(
      `include_paths and exclude_paths hold ${MAX_WILDCARD_TEXT + 1} characters from their globs' first "*" or "{" on, over ${MAX_WILDCARD_TEXT}`,
    );
    expect(globListProblem(['/{a,b}/x'], [])).toBeUndefined();
    // The globs' text in all: what compiling them costs.
    const of = (n: number) => `/${'a'.repeat(n - 1)}`;
    const include = Array.from({ length: 20 }, () => of(100));
    const exclude = [...Array.from({ length: 19 }, () => of(100)), of(MAX_GLOB_TEXT - 3900)];
    expect(globListProblem(include, exclude)).toBeUndefined();
    expect(globListProblem(include, [...exclude.slice(1), `${exclude[0]}x`])).toBe(
      `include_paths and exclude_paths hold ${MAX_GLOB_TEXT + 1} characters in all, over ${MAX_GLOB_TEXT}`,
    );
  });

  it('every glob globProblem accepts compiles, whatever its characters', () => {
    const rnd = prng(32);
    const alphabet = [...'/*?[]!^-{},\\ab:.()|$+ ', '\ud800', '\u{1f600}', '[:alpha:]'];
    let accepted = 0;
    for (let n = 0; n < 2000; n++) {
      const body = Array.from(
        { length: 1 + Math.floor(rnd() * 30) },
        () => alphabet[Math.floor(rnd() * alphabet.length)],
      );
      const glob = `${rnd() < 0.7 ? '/' : '*'}${body.join('')}`;
      if (globProblem(glob) !== undefined) continue;
      accepted++;
      const scope = scopeOf([glob], [glob]);
      expect(typeof scope(`/${body.join('').replace(/[\s?#]/g, '')}`)).toBe('boolean');
    }
    expect(accepted).toBeGreaterThan(1900);
  });
});
