/**
 * The shape a caller's CSS selector may have, checked when a request is validated. The engine
 * (css-select) tries every earlier sibling for each `~`, again for each `~` to its left, with no
 * memory of what it tried: `b ~ * ~ * ~ * ~ * ~ *` on a page of 40 siblings took 2 s, and each
 * `~` more multiplies that. These limits stop the plain cases at the door; the deadline on a
 * page's selector work (selector-run.ts) stops the rest.
 */
// css-what: the parser css-select itself uses, read here for the selector's shape.
import { parse, type Selector } from 'css-what';

/** Combinators in one complex selector (one part of a comma list), those in its pseudo-classes included. */
export const MAX_COMBINATORS = 8;
/** `~` combinators in one complex selector. */
export const MAX_SIBLING_COMBINATORS = 2;
/** Pseudo-classes that take selectors (`:not`, `:is`, `:has`…) inside one another. */
export const MAX_NESTING = 2;

interface Shape {
  combinators: number;
  siblings: number;
  depth: number;
}

const COMBINATORS = new Set(['adjacent', 'child', 'descendant', 'parent', 'sibling', 'column-combinator']);

function shapeOf(complex: Selector[], depth: number): Shape {
  const s: Shape = { combinators: 0, siblings: 0, depth };
  for (const part of complex) {
    if (COMBINATORS.has(part.type)) {
      s.combinators++;
      if (part.type === 'sibling') s.siblings++;
    } else if (part.type === 'pseudo' && Array.isArray(part.data)) {
      for (const inner of part.data) {
        const n = shapeOf(inner, depth + 1);
        s.combinators += n.combinators;
        s.siblings += n.siblings;
        s.depth = Math.max(s.depth, n.depth);
      }
    }
  }
  return s;
}

/** Why the extractor would not run `selector`, or undefined when it would. */
export function selectorProblem(selector: string): string | undefined {
  let parsed: Selector[][];
  try {
    parsed = parse(selector);
    // The engine the extractor's DOM runs: what it refuses, it would refuse there. Loaded on the
    // first selector a caller sends: a server that is sent none never holds it.
    (require('css-select') as typeof import('css-select')).compile(selector);
  } catch {
    return 'is not a valid CSS selector';
  }
  for (const complex of parsed) {
    const s = shapeOf(complex, 0);
    if (s.combinators > MAX_COMBINATORS) return `has over ${MAX_COMBINATORS} combinators in one part`;
    if (s.siblings > MAX_SIBLING_COMBINATORS)
      return `has over ${MAX_SIBLING_COMBINATORS} "~" combinators in one part`;
    if (s.depth > MAX_NESTING) return `nests selector pseudo-classes over ${MAX_NESTING} deep`;
  }
  return undefined;
}
