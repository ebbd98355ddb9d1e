import { RE2JS, RE2Set } from 're2js';
import { invalidRequest } from '../common/errors';
import { normalHostname } from '../common/urls';
import { globToRe2 } from './glob';
import { PathRegexes, regexListProblem, regexProblem } from './path-regex';

/** The longest include or exclude glob. */
export const MAX_GLOB_CHARS = 512;
/** A longer path is never matched by a glob: with any glob given, it is out of scope. */
export const MAX_GLOB_PATH = 2048;
/**
 * Characters from each glob's first `*` or `{` on, include and exclude globs together. A path is
 * read once, in time linear in its length, but each step costs as much as the glob text that can
 * be "in play" at that point, and only this part of a glob can be (a literal head is passed a
 * character at a time): this bounds what the worst path of MAX_GLOB_PATH characters costs the
 * main thread.
 */
export const MAX_WILDCARD_TEXT = 128;
/**
 * Characters of all the globs, include and exclude together: compiling them into one automaton
 * is one call into re2js that cannot be cut into slices, and costs as much as their text.
 */
export const MAX_GLOB_TEXT = 4096;
/**
 * Memory the globs' automaton may keep of the states it met. Small on purpose: the states of
 * ordinary globs fit, while a glob whose states never repeat makes re2js give up on its cache
 * sooner and take its step-by-step engine, which costs less than filling a large cache.
 */
const AUTOMATON_BYTES = 8 * 1024;

export interface ScopeSpec {
  seed: string;
  /** Only paths that start with this (as they stand in the URL). */
  pathPrefix?: string;
  includePaths?: string[];
  excludePaths?: string[];
  /** Regular expressions searched for in the path (Firecrawl's includePaths and excludePaths). */
  includeRegex?: string[];
  excludeRegex?: string[];
  allowSubdomains?: boolean;
  allowExternal?: boolean;
}

/** Why a glob is refused (the message of a 400), or undefined when it is fine. */
export function globProblem(glob: string): string | undefined {
  const quoted = JSON.stringify(glob.slice(0, 80));
  if (glob.length > MAX_GLOB_CHARS) return `a path glob is at most ${MAX_GLOB_CHARS} characters`;
  if (glob.includes('\0')) return `path glob ${quoted} holds a NUL character`;
  if (!glob.startsWith('/') && !glob.startsWith('*'))
    return `path glob ${quoted} must start with "/" (a path such as /docs/**) or "*" (such as *.pdf)`;
  try {
    // The translation says what RE2 would not take: what it writes, RE2 compiles.
    pathPattern(glob);
  } catch (err) {
    return `path glob ${quoted} does not parse: ${(err as Error).message}`;
  }
  return undefined;
}

/** Why a request's globs are refused together (the message of a 400), or undefined. */
export function globListProblem(include: string[], exclude: string[]): string | undefined {
  const globs = [...include, ...exclude];
  const all = globs.reduce((n, g) => n + g.length, 0);
  if (all > MAX_GLOB_TEXT)
    return `include_paths and exclude_paths hold ${all} characters in all, over ${MAX_GLOB_TEXT}`;
  const text = globs.reduce((n, g) => n + wildcardText(g), 0);
  if (text <= MAX_WILDCARD_TEXT) return undefined;
  return `include_paths and exclude_paths hold ${text} characters from their globs' first "*" or "{" on, over ${MAX_WILDCARD_TEXT}`;
}

/** What a caller whose globs globListProblem refuses can do. */
export const WILDCARD_HINT =
  'use fewer or shorter globs: merge them with ** or {a,b}, and keep the text after a first wildcard short';

/** The characters of a glob from its first `*` or `{` on. */
export function wildcardText(glob: string): number {
  const chars = [...glob];
  const first = chars.findIndex((c) => c === '*' || c === '{');
  return first < 0 ? 0 : chars.length - first;
}

/**
 * Which discovered links a crawl follows. Scope applies to links found on pages and in sitemaps:
 * the seed is fetched whatever the globs say (the crawl's caller decides that).
 *
 * Hosts: the seed's host name, with and without a leading `www.` (one site), over http or https and
 * on any port; with allowSubdomains, any host under that name too; with allowExternal, any host.
 * Paths: with pathPrefix, only paths that start with it, or are it less its trailing slash (the
 * scope of a Firecrawl crawl from a sub-path). Globs (see glob.ts) on the URL's pathname as it stands in the URL (escapes not decoded),
 * a trailing slash either way (`/docs/*` takes `/docs/a/`). A glob starting with `/` is matched
 * against the whole path; one starting with `*` and without `/` against the last segment
 * (`*.pdf`); one starting with `*` and holding a `/` against the path less its leading `/`. A link
 * must match an include glob when any is given, and no exclude glob; so too for the regular
 * expressions (path-regex.ts), searched for in the path; a path over MAX_GLOB_PATH then matches
 * none. A glob globProblem refuses throws invalid_request here too. Every glob is in
 * one automaton, so a path is read once whatever the number of globs.
 */
export class CrawlScope {
  private readonly host: string;
  private readonly includes: number;
  private readonly globs?: RE2Set;
  private readonly regexes?: PathRegexes;

  constructor(private readonly spec: ScopeSpec) {
    const seed = new URL(spec.seed);
    this.host = withoutWww(normalHostname(seed.hostname));
    const [includeRe, excludeRe] = [spec.includeRegex ?? [], spec.excludeRegex ?? []];
    if (includeRe.length || excludeRe.length) {
      const problem =
        [...includeRe, ...excludeRe].map(regexProblem).find(Boolean) ??
        regexListProblem(includeRe, excludeRe);
      if (problem) throw invalidRequest(problem);
      this.regexes = new PathRegexes(includeRe, excludeRe);
    }
    const include = spec.includePaths ?? [];
    const all = [...include, ...(spec.excludePaths ?? [])];
    this.includes = include.length;
    for (const glob of all) {
      const problem = globProblem(glob);
      if (problem) throw invalidRequest(problem);
    }
    if (!all.length) return;
    this.globs = new RE2Set(RE2Set.ANCHOR_BOTH, RE2JS.DOTALL, AUTOMATON_BYTES);
    // Each glob also takes its paths with one more `/`; the path is read with a `/` added when it
    // has none, so one reading answers for the path and for it with its trailing slash toggled.
    for (const glob of all) {
      try {
        this.globs.add(`(?:${pathPattern(glob)})/?`);
      } catch (err) {
        throw invalidRequest(
          `path glob ${JSON.stringify(glob.slice(0, 80))} does not parse: ${(err as Error).message}`,
        );
      }
    }
    this.globs.compile();
  }

  allows(url: URL): boolean {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    if (!this.hostAllowed(normalHostname(url.hostname))) return false;
    const path = url.pathname;
    if (this.spec.pathPrefix !== undefined && !underPrefix(path, this.spec.pathPrefix)) return false;
    if (!this.globs && !this.regexes) return true;
    if (path.length > MAX_GLOB_PATH) return false;
    if (this.globs) {
      const hits = this.globs.match(path.endsWith('/') ? path : `${path}/`);
      if (this.includes && !hits.some((i) => i < this.includes)) return false;
      if (hits.some((i) => i >= this.includes)) return false;
    }
    return this.regexes?.allows(path) ?? true;
  }

  private hostAllowed(hostname: string): boolean {
    if (this.spec.allowExternal) return true;
    if (withoutWww(hostname) === this.host) return true;
    return !!this.spec.allowSubdomains && hostname.endsWith(`.${this.host}`);
  }
}

/** Whether `path` is under `prefix`: it starts with it, or is it less its trailing slash. */
function underPrefix(path: string, prefix: string): boolean {
  return path.startsWith(prefix) || (prefix.endsWith('/') && path === prefix.slice(0, -1));
}

/**
 * Builds and uses one scope, at start: re2js fills its tables on first use, which would otherwise
 * hold the event loop during the first request that has globs.
 */
export function warmScopes(): void {
  const scope = new CrawlScope({
    seed: 'http://warm.invalid/',
    includePaths: ['/docs/**', '*.pdf'],
    excludePaths: ['**/{a,b}/[a-z]?'],
  });
  scope.allows(new URL('http://warm.invalid/docs/a/b.pdf'));
}

function withoutWww(hostname: string): string {
  return hostname.startsWith('www.') ? hostname.slice(4) : hostname;
}

/** RE2 for the whole paths a glob takes, as CrawlScope says. */
function pathPattern(glob: string): string {
  if (glob.startsWith('/')) return globToRe2(glob);
  if (!glob.includes('/')) return `.*/${globToRe2(glob)}`;
  return globToRe2(`/${glob}`);
}
