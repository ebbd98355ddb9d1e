import picomatch from 'picomatch';
import { invalidRequest } from '../common/errors';
import { normalHostname } from '../common/urls';

/** The longest include or exclude glob. */
export const MAX_GLOB_CHARS = 512;
/**
 * `*` and `**` a glob may hold, besides a `*` that is a whole path segment alone (as in `/blog/*`):
 * picomatch's regular expressions backtrack over the path once per such wildcard, so k of them
 * cost up to pathᵏ steps; two keep a match of a MAX_GLOB_PATH path to a few milliseconds.
 */
export const MAX_GLOB_WILDCARDS = 2;
/** A longer path is never matched by a glob: with any glob given, it is out of scope. */
export const MAX_GLOB_PATH = 2048;

/**
 * picomatch, the glob matcher jest and chokidar use: dot segments match (`/.well-known/**`), no
 * extglobs (`+(a|b)` is literal), no `!` negation (a glob starts with `/` or `*`), `/` only as the
 * separator.
 */
const GLOB_OPTIONS = { dot: true, noextglob: true, nonegate: true, windows: false };

export interface ScopeSpec {
  seed: string;
  includePaths?: string[];
  excludePaths?: string[];
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
  if (wildcards(glob) > MAX_GLOB_WILDCARDS)
    return `path glob ${quoted} holds more than ${MAX_GLOB_WILDCARDS} "*" or "**" wildcards (a "*" that is a whole path segment aside)`;
  try {
    picomatch.makeRe(glob, GLOB_OPTIONS);
  } catch (err) {
    return `path glob ${quoted} does not parse: ${(err as Error).message}`;
  }
  return undefined;
}

/**
 * Which discovered links a crawl follows. Scope applies to links found on pages and in sitemaps:
 * the seed is fetched whatever the globs say (the crawl's caller decides that).
 *
 * Hosts: the seed's host name, with and without a leading `www.` (one site), over http or https and
 * on any port; with allowSubdomains, any host under that name too; with allowExternal, any host.
 * Paths: globs on the URL's pathname as it stands in the URL (escapes not decoded), a trailing
 * slash either way (`/docs/*` takes `/docs/a/`). A glob starting with `/` is matched against the
 * whole path; one starting with `*` and without `/` against the last segment (`*.pdf`); one starting
 * with `*` and holding a `/` against the path less its leading `/`. A link must match an include
 * glob when any is given, and no exclude glob; a path over MAX_GLOB_PATH then matches none. A glob
 * globProblem refuses throws invalid_request here too.
 */
export class CrawlScope {
  private readonly host: string;
  private readonly include: ((path: string) => boolean)[];
  private readonly exclude: ((path: string) => boolean)[];

  constructor(private readonly spec: ScopeSpec) {
    const seed = new URL(spec.seed);
    this.host = withoutWww(normalHostname(seed.hostname));
    this.include = (spec.includePaths ?? []).map(matcher);
    this.exclude = (spec.excludePaths ?? []).map(matcher);
  }

  allows(url: URL): boolean {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    if (!this.hostAllowed(normalHostname(url.hostname))) return false;
    if (!this.include.length && !this.exclude.length) return true;
    const path = url.pathname;
    if (path.length > MAX_GLOB_PATH) return false;
    const alt = path === '/' ? path : path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    const hit = (m: (p: string) => boolean) => m(path) || m(alt);
    if (this.include.length && !this.include.some(hit)) return false;
    return !this.exclude.some(hit);
  }

  private hostAllowed(hostname: string): boolean {
    if (this.spec.allowExternal) return true;
    if (withoutWww(hostname) === this.host) return true;
    return !!this.spec.allowSubdomains && hostname.endsWith(`.${this.host}`);
  }
}

function withoutWww(hostname: string): string {
  return hostname.startsWith('www.') ? hostname.slice(4) : hostname;
}

/** A glob's test of a path, as CrawlScope says. */
function matcher(glob: string): (path: string) => boolean {
  const problem = globProblem(glob);
  if (problem) throw invalidRequest(problem);
  if (glob.startsWith('/')) return picomatch(glob, GLOB_OPTIONS);
  if (!glob.includes('/')) return picomatch(`**/${glob}`, GLOB_OPTIONS);
  const m = picomatch(glob, GLOB_OPTIONS);
  return (path) => m(path.slice(1));
}

/** The glob's runs of `*`, less each single `*` that is a whole segment of a glob holding a `/`. */
function wildcards(glob: string): number {
  let count = 0;
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] !== '*') continue;
    let end = i;
    while (glob[end + 1] === '*') end++;
    const segment =
      end === i && (i === 0 || glob[i - 1] === '/') && (end + 1 === glob.length || glob[end + 1] === '/');
    if (!segment || (i === 0 && !glob.includes('/'))) count++;
    i = end;
  }
  return count;
}
