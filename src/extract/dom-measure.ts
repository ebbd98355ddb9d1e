/**
 * What the cleaning rules read of an element before and after Readability: how much text it holds,
 * how much of that is link text, whether it still hangs under the article, and whether it is a
 * subheading.
 */
import { isWhiteSpace } from '../common/white-space';

/** A subheading's tag (an h1 is the page's title). */
export const HEADING = /^H[2-6]$/;

/** An element's class and id, in one string: what names it as furniture or content. */
export function classId(el: Element): string {
  return `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
}

/** Characters of text in `el`, whitespace runs counted as one, ends trimmed. */
export function textLen(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, ' ').trim().length;
}

/** Whether el still hangs under root (the article may be a detached tree, so isConnected cannot tell). */
export function under(el: Element, root: Element): boolean {
  for (let n: Node | null = el; n; n = n.parentNode) if (n === root) return true;
  return false;
}

export interface Lengths {
  /** Characters of text, whitespace runs counted as one. */
  text: number;
  /** Of which inside links. */
  link: number;
  /** Whether it holds a p, div or li. */
  blocks: boolean;
}

/** The lengths of `root` and of every element under it, in one walk. */
export function measure(root: Element): Map<Element, Lengths> {
  const out = new Map<Element, Lengths>();
  const walk = (el: Element, inLink: boolean): Lengths => {
    const m: Lengths = { text: 0, link: 0, blocks: false };
    const link = inLink || el.localName === 'a';
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) {
        const n = collapsedLength((c as Text).data);
        m.text += n;
        if (link) m.link += n;
      } else if (c.nodeType === 1) {
        const child = c as Element;
        const cm = walk(child, link);
        m.text += cm.text;
        m.link += cm.link;
        m.blocks ||=
          cm.blocks || child.localName === 'p' || child.localName === 'div' || child.localName === 'li';
      }
    }
    out.set(el, m);
    return m;
  };
  walk(root, false);
  return out;
}

/** `s.replace(/\s+/g, ' ').length`, without building the string. */
export function collapsedLength(s: string): number {
  let n = 0;
  let space = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const isSpace = isWhiteSpace(c);
    if (!isSpace || !space) n++;
    space = isSpace;
  }
  return n;
}

/**
 * Text between a page's heading and what follows it directly, at most: a byline, a date, a
 * toolbar, a page count.
 */
export const LEAD_CHARS = 150;

/** Not read as text between two elements (see firstWithin). */
const UNSEEN = /^(script|style|noscript|template)$/;

/**
 * The first element after `from` (in document order, not inside it) that `match` accepts, when
 * under `max` characters of seen text lie between them; else undefined. The walk reads no further.
 */
export function firstWithin(
  from: Element,
  max: number,
  match: (el: Element) => boolean,
): Element | undefined {
  let n = 0;
  let node: Node | null = past(from);
  while (node && n < max) {
    if (node.nodeType === 3) n += collapsedLength((node as Text).data.trim());
    const el = node.nodeType === 1 ? (node as Element) : null;
    if (el && match(el)) return el;
    node = el && !UNSEEN.test(el.localName) && el.firstChild ? el.firstChild : past(node);
  }
  return undefined;
}

/** The node after `node` and all it holds, in document order. */
function past(node: Node): Node | null {
  for (let n: Node | null = node; n; n = n.parentNode) if (n.nextSibling) return n.nextSibling;
  return null;
}

/** Whether `el` holds at least `min` characters of text (read no further than that). */
export function textAtLeast(el: Element, min: number): boolean {
  return textUpTo(el, min) >= min;
}

/** The characters of text in `el` (whitespace runs as one), counted up to `max`. */
export function textUpTo(el: Element, max = Infinity): number {
  let n = 0;
  for (let node: Node | null = el.firstChild; node && node !== el;) {
    if (node.nodeType === 3 && (n += collapsedLength((node as Text).data)) >= max) return n;
    if (node.firstChild) node = node.firstChild;
    else {
      while (node && node !== el && !node.nextSibling) node = node.parentNode;
      node = node && node !== el ? node.nextSibling : null;
    }
  }
  return n;
}

/**
 * `el` replaced by `nodes` (its own children when not given), one at a time: a spread of the
 * hundreds of thousands of nodes a page can hold overflows the stack.
 */
export function replaceWithNodes(el: Element, nodes: readonly Node[] = Array.from(el.childNodes)): void {
  const parent = el.parentNode;
  if (!parent) return;
  for (const n of nodes) parent.insertBefore(n, el);
  el.remove();
}
