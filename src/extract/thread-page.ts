/**
 * Before Readability, on a page of posts (a forum thread, a question and its answers): the posts
 * are the page's content, though they are built and named as readers' comments are. An article's
 * comments follow the article; a thread's first post follows the page's heading.
 */
import { classId, firstWithin, LEAD_CHARS, textLen } from './dom-measure';
import { typeOf, type Json } from './json-ld';
import { COMMENT_NAMED } from './vocabulary';

/** A post's length at least: a "12 comments" link or a reply button is not a post. */
const POST_CHARS = 200;

/**
 * Whether a post-length block named or built as a comment (`posts`, from one list or another)
 * follows the page's heading with under LEAD_CHARS of text between them: no article stands
 * between the heading and the posts.
 */
export function isThreadPage(heading: Element | undefined, ...posts: Element[][]): boolean {
  if (!heading) return false;
  const candidates = new Set(posts.flat());
  if (candidates.size === 0) return false;
  return !!firstWithin(heading, LEAD_CHARS, (el) => candidates.has(el) && textLen(el) >= POST_CHARS);
}

/**
 * Whether a post-length block after the page's heading is built as the comments `items` are (their
 * tag and first class, in their parent, before them): a thread's first post is built as its replies
 * are, though only the replies are marked up as comments. An article is not built as its comments.
 */
export function leadsReplies(heading: Element | undefined, items: Element[]): boolean {
  if (!heading) return false;
  const seen = new Set<Element>();
  for (const item of items) {
    const parent = item.parentElement;
    if (!parent || seen.has(parent)) continue;
    seen.add(parent);
    const shape = firstClass(item);
    for (let el = item.previousElementSibling; el; el = el.previousElementSibling)
      if (
        el.localName === item.localName &&
        firstClass(el) === shape &&
        textLen(el) >= POST_CHARS &&
        heading.compareDocumentPosition(el) & 4 // DOCUMENT_POSITION_FOLLOWING
      )
        return true;
  }
  return false;
}

function firstClass(el: Element): string {
  return (el.getAttribute('class') ?? '').trim().split(/\s+/)[0];
}

/** The types of structured data that say a page is a thread of posts (schema.org). */
const THREAD_TYPES = /(^|\s)(DiscussionForumPosting|QAPage)(\s|$)/;
const THREAD_ITEMTYPE = /schema\.org\/(DiscussionForumPosting|QAPage)\/?$/i;

/**
 * Whether the page says it is a thread: one of its JSON-LD objects (`ld`, read with the page's
 * head: a script's top item or a @graph member), or the microdata item that holds its heading, is a
 * DiscussionForumPosting or a QAPage (a forum's topic, a question and its answers). An article's
 * comments are marked up as Comment, within the article.
 */
export function statesThread(doc: Document, heading: Element | undefined, ld: Json[]): boolean {
  if (ld.some((o) => THREAD_TYPES.test(typeOf(o)))) return true;
  for (let el = heading?.parentElement; el && el !== doc.documentElement; el = el.parentElement)
    if (THREAD_ITEMTYPE.test(el.getAttribute('itemtype') ?? '')) return true;
  return false;
}

/**
 * On a thread page: the elements named as comments lose their names, so Readability judges them
 * by their text. A reply form keeps its names (and goes as a form).
 */
export function unnameComments(named: Element[]): void {
  for (const el of named) {
    const ci = classId(el);
    if (ci.length >= 200 || !COMMENT_NAMED.test(ci)) continue;
    if (el.localName === 'form' || (el.querySelector('textarea') && textLen(el) < 2 * POST_CHARS)) continue;
    el.removeAttribute('class');
    el.removeAttribute('id');
  }
}
