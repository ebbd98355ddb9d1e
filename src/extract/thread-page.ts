/**
 * Before Readability, on a page of posts (a forum thread, a question and its answers): the posts
 * are the page's content, though they are built and named as readers' comments are. An article's
 * comments follow the article; a thread's first post follows the page's heading.
 */
import { collapsedLength, textLen } from './dom-measure';

/** Names Readability takes for a comment: it drops an element so named, or marks it down. */
export const COMMENT_NAMED = /comment|discuss|repl(y|ies)/i;

/** A post's length at least: a "12 comments" link or a reply button is not a post. */
const POST_CHARS = 200;

/** Text between the page's heading and its first post, at most (a toolbar, a page count). */
const LEAD_CHARS = 150;

/** Not read as text between a heading and a post. */
const UNSEEN = /^(script|style|noscript|template)$/;

/**
 * Whether the first post-length block named or built as a comment (`posts`: candidates in
 * document order, from one list or another) follows the page's heading with under LEAD_CHARS of
 * text between them: no article stands between the heading and the posts.
 */
export function isThreadPage(heading: Element | undefined, ...posts: Element[][]): boolean {
  if (!heading) return false;
  return posts.some((list) => {
    const first = list.find((p) => followsOutside(heading, p) && textLen(p) >= POST_CHARS);
    return !!first && textBetween(heading, first) < LEAD_CHARS;
  });
}

/**
 * On a thread page: the elements named as comments lose their names, so Readability judges them
 * by their text. A reply form keeps its names (and goes as a form).
 */
export function unnameComments(named: Element[]): void {
  for (const el of named) {
    const ci = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
    if (ci.length >= 200 || !COMMENT_NAMED.test(ci)) continue;
    if (el.localName === 'form' || (el.querySelector('textarea') && textLen(el) < 2 * POST_CHARS)) continue;
    el.removeAttribute('class');
    el.removeAttribute('id');
  }
}

/** `b` comes after `a` in document order, not inside it. */
function followsOutside(a: Element, b: Element): boolean {
  const pos = a.compareDocumentPosition(b);
  return (pos & 4) !== 0 && (pos & 16) === 0;
}

/** Characters of seen text from the end of `from` to the start of `to`, counted up to LEAD_CHARS. */
function textBetween(from: Element, to: Element): number {
  let n = 0;
  let node: Node | null = past(from);
  while (node && node !== to && n < LEAD_CHARS) {
    if (node.nodeType === 3) n += collapsedLength((node as Text).data.trim());
    const el = node.nodeType === 1 ? (node as Element) : null;
    node = el && !UNSEEN.test(el.localName) && el.firstChild ? el.firstChild : past(node);
  }
  return n;
}

/** The node after `node` and all it holds, in document order. */
function past(node: Node): Node | null {
  for (let n: Node | null = node; n; n = n.parentNode) if (n.nextSibling) return n.nextSibling;
  return null;
}
