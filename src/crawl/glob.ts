/**
 * Path globs written as RE2 syntax, for re2js: an automaton, not a backtracker, so a path is
 * matched in time linear in its length whatever the glob (SPEC "The main thread stays free").
 *
 * `**` crosses `/`: as a whole segment (`/docs/**`, `/a/**\/b`, `**\/x`) it stands for any number
 * of segments, none included, elsewhere for any text. `*` is any text within a segment (at least
 * one character when it is the whole segment), `?` one character but `/`. `[...]` is a class
 * (`[!...]` or `[^...]` negated, never matching `/`; ranges; POSIX `[:alpha:]`), `{a,b}` one of
 * its alternatives (they nest and hold wildcards), `\` makes the next character literal. Anything
 * else is literal: a `[` or `{` never closed, a `{...}` with no comma at its top level.
 */

/** A glob RE2 cannot take: its message says why. */
export class GlobSyntaxError extends Error {}

const POSIX_CLASSES = new Set([
  'alnum',
  'alpha',
  'ascii',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'word',
  'xdigit',
]);

/** RE2 source matching exactly the paths `glob` matches (no anchors: the caller matches whole). */
export function globToRe2(glob: string): string {
  const chars = [...glob];
  return new Translation(chars).run(0, chars.length);
}

class Translation {
  /** classEnd's answers: braces ask again for each class inside them. */
  private readonly classEnds = new Map<number, number>();

  constructor(private readonly g: string[]) {}

  /** RE2 for g[from, to). */
  run(from: number, to: number): string {
    const g = this.g;
    let out = '';
    for (let i = from; i < to; i++) {
      const c = g[i];
      if (c === '\\') {
        out += literal(i + 1 < to ? g[++i] : c);
      } else if (c === '/' && this.starsEnd(i + 1) - i > 2 && this.starsEnd(i + 1) === g.length) {
        // The slash belongs to a closing globstar: `/docs/**` takes `/docs` too.
        out += '(?:/.*)?';
        i = g.length;
      } else if (c === '*') {
        const end = this.starsEnd(i);
        const segmentStart = i === 0 || g[i - 1] === '/';
        if (end - i > 1 && segmentStart && end < to && g[end] === '/') {
          // So is the slash after an opening or inner one: `/a/**/b` takes `/a/b`.
          out += '(?:.*/)?';
          i = end;
        } else if (end - i > 1) {
          out += '.*';
          i = end - 1;
        } else {
          out += segmentStart && (end === g.length || g[end] === '/') ? '[^/]+' : '[^/]*';
        }
      } else if (c === '?') {
        out += '[^/]';
      } else if (c === '[' && this.classEnd(i) > 0) {
        const end = this.classEnd(i);
        out += this.charClass(i + 1, end);
        i = end;
      } else if (c === '{' && this.braceEnd(i, to) > 0) {
        const end = this.braceEnd(i, to);
        out += `(?:${this.alternatives(i + 1, end).join('|')})`;
        i = end;
      } else {
        out += literal(c);
      }
    }
    return out;
  }

  /** Where the run of `*` starting at `i` ends. */
  private starsEnd(i: number): number {
    while (this.g[i] === '*') i++;
    return i;
  }

  /** The index of the `]` closing a class opened at `open`, or -1 when it is not a class. */
  private classEnd(open: number): number {
    let end = this.classEnds.get(open);
    if (end === undefined) this.classEnds.set(open, (end = this.findClassEnd(open)));
    return end;
  }

  private findClassEnd(open: number): number {
    const g = this.g;
    let i = open + 1;
    if (g[i] === '!' || g[i] === '^') i++;
    if (g[i] === ']') i++;
    for (; i < g.length; i++) {
      if (g[i] === '\\') i++;
      else if (this.posixAt(i) > 0) i = this.posixAt(i) - 1;
      else if (g[i] === ']') return i;
    }
    return -1;
  }

  private charClass(from: number, to: number): string {
    const g = this.g;
    let i = from;
    const negated = g[i] === '!' || g[i] === '^';
    if (negated) i++;
    let items = '';
    while (i < to) {
      const posixEnd = this.posixAt(i);
      if (posixEnd > 0) {
        items += g.slice(i, posixEnd).join('');
        i = posixEnd;
        continue;
      }
      const lo = g[i] === '\\' && i + 1 < to ? g[++i] : g[i];
      i++;
      if (g[i] === '-' && i + 1 < to) {
        const hi = g[i + 1] === '\\' && i + 2 < to ? g[i + 2] : g[i + 1];
        i += g[i + 1] === '\\' && i + 2 < to ? 3 : 2;
        if (lo.codePointAt(0)! > hi.codePointAt(0)!)
          throw new GlobSyntaxError(`character range ${lo}-${hi} is out of order`);
        items += `${hex(lo)}-${hex(hi)}`;
      } else {
        items += hex(lo);
      }
    }
    return negated ? `[^/${items}]` : `[${items}]`;
  }

  /** The end of a POSIX class such as `[:alpha:]` starting at `i`, or -1 when none does. */
  private posixAt(i: number): number {
    const g = this.g;
    if (g[i] !== '[' || g[i + 1] !== ':') return -1;
    const close = g.indexOf(':', i + 2);
    if (close < 0 || g[close + 1] !== ']') return -1;
    return POSIX_CLASSES.has(g.slice(i + 2, close).join('')) ? close + 2 : -1;
  }

  /** The index of the `}` closing a brace opened at `open` that holds a top-level comma, or -1. */
  private braceEnd(open: number, to: number): number {
    const g = this.g;
    let depth = 0;
    let comma = false;
    for (let i = open + 1; i < to; i++) {
      const c = g[i];
      if (c === '\\') i++;
      else if (c === '[' && this.classEnd(i) > 0 && this.classEnd(i) < to) i = this.classEnd(i);
      else if (c === '{') depth++;
      else if (c === '}' && depth > 0) depth--;
      else if (c === '}') return comma ? i : -1;
      else if (c === ',' && depth === 0) comma = true;
    }
    return -1;
  }

  /** The RE2 of each top-level alternative of g[from, to). */
  private alternatives(from: number, to: number): string[] {
    const g = this.g;
    const out: string[] = [];
    let depth = 0;
    let start = from;
    for (let i = from; i < to; i++) {
      const c = g[i];
      if (c === '\\') i++;
      else if (c === '[' && this.classEnd(i) > 0 && this.classEnd(i) < to) i = this.classEnd(i);
      else if (c === '{') depth++;
      else if (c === '}') depth--;
      else if (c === ',' && depth === 0) {
        out.push(this.run(start, i));
        start = i + 1;
      }
    }
    out.push(this.run(start, to));
    return out;
  }
}

/** A character as RE2 takes it literally, inside a class or out. */
function hex(c: string): string {
  return `\\x{${c.codePointAt(0)!.toString(16)}}`;
}

function literal(c: string): string {
  return /^[A-Za-z0-9_/-]$/.test(c) ? c : hex(c);
}
