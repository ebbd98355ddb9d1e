/**
 * Path patterns as Firecrawl writes them (`includePaths`/`excludePaths`): regular expressions
 * searched for anywhere in a URL's path, run by re2js, an automaton that reads a path once in time
 * linear in its length. Lookaround and backreferences, which need a backtracker, do not parse.
 */
import { RE2JS, RE2Set } from 're2js';

/** The longest path regex. */
export const MAX_REGEX_CHARS = 256;
/**
 * Instructions of a request's path regexes together (re2js's program size). Reading a path costs
 * up to this much per character: at this bound, the worst pattern measured over a 2,048-character
 * path took about 3 ms, while an ordinary one (`^/blog/.*`, 11 instructions) costs a tenth of it.
 */
export const MAX_REGEX_PROGRAM = 128;
/** Memory the automaton may keep of the states it met (as the globs', see scope.ts). */
const AUTOMATON_BYTES = 8 * 1024;

/** Why a path regex is refused (the message of a 400), or undefined when it is fine. */
export function regexProblem(re: string): string | undefined {
  const quoted = JSON.stringify(re.slice(0, 80));
  if (re.length > MAX_REGEX_CHARS) return `a path pattern is at most ${MAX_REGEX_CHARS} characters`;
  if (re.includes('\0')) return `path pattern ${quoted} holds a NUL character`;
  try {
    RE2JS.compile(re);
  } catch (err) {
    return `path pattern ${quoted} is not a regular expression a linear-time engine runs (no lookaround or backreference): ${(err as Error).message}`;
  }
  return undefined;
}

/** Why a request's path regexes are refused together (the message of a 400), or undefined. */
export function regexListProblem(include: string[], exclude: string[]): string | undefined {
  const size = [...include, ...exclude].reduce((n, re) => n + RE2JS.compile(re).programSize(), 0);
  if (size <= MAX_REGEX_PROGRAM) return undefined;
  return `include_regex and exclude_regex compile to ${size} instructions in all, over ${MAX_REGEX_PROGRAM}`;
}

/** What a caller whose patterns regexListProblem refuses can do. */
export const REGEX_HINT =
  'use fewer or simpler patterns: one alternation (a|b) for several folders, no counted repeats such as .{0,9}';

/**
 * A path matches an include pattern when any is given, and no exclude pattern: one reading for
 * all, of the path and of it with its trailing slash toggled (a crawl's URLs are canonical, without
 * it, while the link may have had it: `^/docs/guide/` takes `/docs/guide`).
 */
export class PathRegexes {
  private readonly set = new RE2Set(RE2Set.UNANCHORED, 0, AUTOMATON_BYTES);
  private readonly includes: number;

  /** The patterns are checked first (regexProblem, regexListProblem). */
  constructor(include: string[], exclude: string[]) {
    this.includes = include.length;
    for (const re of [...include, ...exclude]) this.set.add(re);
    this.set.compile();
  }

  allows(path: string): boolean {
    const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    const hits = [...this.set.match(path), ...(other ? this.set.match(other) : [])];
    if (this.includes && !hits.some((i) => i < this.includes)) return false;
    return !hits.some((i) => i >= this.includes);
  }
}
