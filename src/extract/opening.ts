/**
 * The article's opening, left in a block of its own between the page's heading and the block
 * Readability chose (a CMS's "body" field before its "paragraphs" field, a lead paragraph in the
 * header): paragraphs of prose there are put first in the article.
 */
import { firstWithin } from './dom-measure';
import { sentenceEnds } from './sentences';
import { NOT_TEXT } from './vocabulary';

/** Paragraphs looked at after the heading, at most. */
const MAX_PARAGRAPHS = 40;
/** Text after the heading read for them, at most. */
const READ_CHARS = 20_000;
/** A paragraph of prose has at least this many characters, a sentence, and this little link text. */
const MIN_CHARS = 80;
const MAX_LINK_SHARE = 0.3;
/** Where a paragraph is not the article's: a picture's caption, a notice, a list, a quote, a form. */
const OUTSIDE = 'figure,figcaption,aside,nav,footer,form,li,blockquote';

/** The first paragraphs after `heading`, in document order (taken before Readability moves them). */
export function paragraphsAfter(heading: Element): Element[] {
  const found: Element[] = [];
  firstWithin(heading, READ_CHARS, (el) => {
    if (el.localName === 'p') found.push(el);
    return found.length >= MAX_PARAGRAPHS;
  });
  return found;
}

/**
 * Puts first in `root` the paragraphs of `after` (see paragraphsAfter) that come before the first
 * one `root` holds, are still in the page, and read as prose.
 */
export function withOpening(root: Element, after: Element[]): void {
  const first = after.findIndex((p) => root.contains(p));
  if (first <= 0) return;
  const opening = after.slice(0, first).filter((p) => p.isConnected && isProse(p));
  for (const p of opening.reverse()) root.insertBefore(p, root.firstChild);
}

function isProse(p: Element): boolean {
  if (p.closest(OUTSIDE)) return false;
  for (let el: Element | null = p, depth = 0; el && depth < 5; el = el.parentElement, depth++) {
    if (NOT_TEXT.test(`${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`)) return false;
  }
  const text = (p.textContent ?? '').replace(/\s+/g, ' ').trim();
  if (text.length < MIN_CHARS || sentenceEnds(text, 1) === 0) return false;
  let links = 0;
  for (const a of Array.from(p.querySelectorAll('a'))) links += (a.textContent ?? '').length;
  return links <= text.length * MAX_LINK_SHARE;
}
