/**
 * A thread's posts as the page marks them up (schema.org microdata): each post's text is an
 * element with `itemprop="text"` in an item that is a DiscussionForumPosting, a Question, an
 * Answer or, on a page that says it is a thread, a Comment. Readability keeps one post (a question
 * without its answers, a topic's first post); the posts together are the page's content.
 */
import { wordCount } from './verdict';

/** A page that says it is a thread, in its microdata or JSON-LD. */
const THREAD_PAGE =
  /schema\.org\/(DiscussionForumPosting|QAPage)|"@type"\s*:\s*"(DiscussionForumPosting|QAPage)"/;
/** Items whose `text` is a post wherever they stand. */
const POST_ITEM = /schema\.org\/(DiscussionForumPosting|Question|Answer)\/?$/i;
/** Items whose `text` is a post on a thread's page (elsewhere, an article's comments). */
const REPLY_ITEM = /schema\.org\/Comment\/?$/i;

/** Posts read at most: a thread's page holds tens. */
const MAX_POSTS = 500;

/** The posts stand for the content when they hold this share of its words at least. */
const POSTS_SHARE = 0.9;

/** Whether the page may mark up posts (read before the page is parsed again for them). */
export const mayStatePosts = (html: string): boolean =>
  /itemprop\s*=\s*["']?text\b/i.test(html) &&
  /schema\.org\/(DiscussionForumPosting|Question|Answer|Comment)\b/i.test(html);

/** The page's posts in order, outermost only; none unless there are two or more. */
export function statedPosts(doc: Document, html: string): Element[] {
  const thread = THREAD_PAGE.test(html);
  const posts: Element[] = [];
  for (const el of Array.from(doc.querySelectorAll('[itemprop="text"]')).slice(0, MAX_POSTS)) {
    const item = el.parentElement?.closest('[itemscope]');
    const type = item?.getAttribute('itemtype') ?? '';
    if (!POST_ITEM.test(type) && !(thread && REPLY_ITEM.test(type))) continue;
    if (posts.length > 0 && posts[posts.length - 1].contains(el)) continue;
    posts.push(el);
  }
  return posts.length >= 2 ? posts : [];
}

/** Whether the posts hold most of the words the content holds, or more. */
export function postsAreFuller(posts: Element[], content: string): boolean {
  const found = wordCount(content);
  const stated = posts.reduce((n, p) => n + wordCount(p.textContent ?? ''), 0);
  return stated >= 50 && stated >= POSTS_SHARE * found;
}
