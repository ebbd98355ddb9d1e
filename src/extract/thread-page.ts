/**
 * Before Readability, on a page of posts (a forum thread, a question and its answers): the posts
 * are the page's content, though they are built and named as readers' comments are. An article's
 * comments follow the article; a thread's first post follows the page's heading.
 */
import { classId, firstWithin, LEAD_CHARS, textLen } from './dom-measure';
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

/** The types of structured data that say a page is a thread of posts (schema.org). */
const THREAD_TYPES = /^(DiscussionForumPosting|QAPage)$/;
const THREAD_ITEMTYPE = /schema\.org\/(DiscussionForumPosting|QAPage)\/?$/i;
const THREAD_LD = /"@type"\s*:\s*(\[[^\]]*)?"(DiscussionForumPosting|QAPage)"/;

/**
 * Whether the page says it is a thread: its JSON-LD's top item, or the microdata item that holds
 * its heading, is a DiscussionForumPosting or a QAPage (a forum's topic, a question and its
 * answers). An article's comments are marked up as Comment, within the article.
 */
export function statesThread(doc: Document, heading: Element | undefined, ldScripts: Element[]): boolean {
  for (const s of ldScripts) {
    const text = s.textContent ?? '';
    if (!THREAD_LD.test(text)) continue;
    try {
      const top = JSON.parse(text) as unknown;
      const items = Array.isArray(top)
        ? top
        : [top, ...((top as { '@graph'?: unknown[] })?.['@graph'] ?? [])];
      for (const it of items) {
        const t = (it as { '@type'?: unknown })?.['@type'];
        if ([t].flat().some((x) => typeof x === 'string' && THREAD_TYPES.test(x))) return true;
      }
    } catch {
      // not JSON: says nothing
    }
  }
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
