import { Tokenizer } from 'htmlparser2';

/** Deeper than this, elements are dropped and only their text is kept. */
export const MAX_DEPTH = 200;

/**
 * A page with at most this many tags may be parsed before its depth is known: nested as deep as
 * they go (4,000 unclosed tags), the DOM parser takes about 0.1 s. The article corpus's pages have
 * 700 to 3,300.
 */
export const PARSE_FIRST_MAX_TAGS = 4000;

/** Whether html has at most `max` tags (counted as '<' characters, an upper bound). */
export function fewTags(html: string, max = PARSE_FIRST_MAX_TAGS): boolean {
  let n = 0;
  for (let i = html.indexOf('<'); i >= 0; i = html.indexOf('<', i + 1)) if (++n > max) return false;
  return true;
}

const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
  'param',
  'keygen',
]);
/** Elements whose end tag may be left out: a sibling of the same kind closes the open one. */
const SELF_CLOSING_SIBLINGS: Record<string, string[]> = {
  p: ['p'],
  li: ['li'],
  dt: ['dt', 'dd'],
  dd: ['dt', 'dd'],
  tr: ['tr', 'td', 'th'],
  td: ['td', 'th'],
  th: ['td', 'th'],
  option: ['option'],
};

/**
 * Rewrites html so no element nests deeper than maxDepth; a shallow document comes back as it was.
 * DOM algorithms (Readability walks ancestors, the markdown converter recurses) are quadratic or recursive in
 * depth, so a hostile page nested 100,000 deep would take minutes or overflow the stack. This is one
 * linear pass over htmlparser2's tokenizer (its Parser keeps its stack with unshift, quadratic in
 * depth): tags past the limit are dropped, their text kept.
 */
export function limitDepth(html: string, maxDepth = MAX_DEPTH): string {
  const stack: string[] = [];
  const counts = new Map<string, number>();
  const keep: [number, number][] = []; // [start, end) slices of html to keep
  let deepest = 0;
  let tagStart = 0;
  let tagName = '';
  let tagKept = false;

  const push = (name: string) => {
    stack.push(name);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  };
  const pop = () => {
    const name = stack.pop()!;
    counts.set(name, counts.get(name)! - 1);
    return name;
  };

  const tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: false },
    {
      onopentagname(start, end) {
        tagStart = start - 1;
        tagName = html.slice(start, end).toLowerCase();
        const closes = SELF_CLOSING_SIBLINGS[tagName];
        if (closes && stack.length > 0 && closes.includes(stack[stack.length - 1])) pop();
        tagKept = stack.length < maxDepth;
      },
      onopentagend(end) {
        if (tagKept) keep.push([tagStart, end + 1]);
        if (!VOID.has(tagName)) {
          push(tagName);
          deepest = Math.max(deepest, stack.length);
        }
      },
      onselfclosingtag(end) {
        if (tagKept) keep.push([tagStart, end + 1]);
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (!counts.get(name)) return; // a stray end tag
        while (stack.length > 0) {
          const depth = stack.length;
          const top = pop();
          if (top === name) {
            if (depth <= maxDepth) keep.push([start - 2, html.indexOf('>', end) + 1 || end]);
            break;
          }
        }
      },
      ontext(start, end) {
        keep.push([start, end]);
      },
      ontextentity() {},
      onattribdata() {},
      onattribentity() {},
      onattribend() {},
      onattribname() {},
      oncdata() {},
      oncomment() {},
      ondeclaration(start, end) {
        keep.push([start - 2, end + 1]);
      },
      onprocessinginstruction() {},
      onend() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  if (deepest <= maxDepth) return html;
  return keep.map(([a, b]) => html.slice(a, b)).join('');
}
