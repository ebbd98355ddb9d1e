/**
 * Before Readability: an article the page holds only in a script's template or a `<noscript>` (a
 * blog engine that writes the post from a `<script type="text/template">`, with a `<noscript>`
 * copy for readers without scripts). Readability removes both; the block they stand in is empty.
 */
import { followsOutside, LEAD_CHARS, textBetween } from './dom-measure';
import { limitDepth } from './flatten';
import { wordCount } from './verdict';

/** Words a template must hold to be an article (a JavaScript notice or a pixel holds fewer). */
const ARTICLE_WORDS = 50;

/**
 * An article is written in paragraphs or lines: a template of JSON (even with html in its strings)
 * or of bare text is not one. A template's html begins with a tag.
 */
const BLOCKS = 'p,br,div,li';
const BLOCK_TAG = /<(p|br|div|li)[\s/>]/i;

/** How many scripts holding an article are looked at (a page may hold thousands). */
const MAX_PLACED = 16;

/** How deep a template's html may nest once parsed (it goes under an element of the page). */
const TEMPLATE_DEPTH = 50;

/** A script holding html to be written into the page. */
export function isTemplateScript(el: Element): boolean {
  return /^text\/(x-)?template$/i.test((el.getAttribute('type') ?? '').trim());
}

/**
 * Each template script or `<noscript>` (in document order) that follows the page's heading with
 * under LEAD_CHARS of text between, is the only text of its block and holds an article's words is
 * replaced by its content (a cookie box's template stands elsewhere). A second copy beside the first (the
 * `<noscript>` after the template) then no longer stands alone, and stays to be removed. Says
 * whether any was.
 */
export function unwrapScriptText(scripts: Element[], heading: Element | undefined): boolean {
  let unwrapped = false;
  let placed = 0;
  for (const el of heading ? scripts : []) {
    const content = articleIn(el);
    if (!content) continue;
    // Where it stands is judged for the first few only: each look walks the page.
    if (++placed > MAX_PLACED) break;
    const block = el.parentElement;
    if (!block || /^(BODY|HTML|HEAD)$/.test(block.tagName) || !alone(el, block)) continue;
    if (!followsOutside(heading!, el) || textBetween(heading!, el, LEAD_CHARS) >= LEAD_CHARS) continue;
    el.replaceWith(...content());
    unwrapped = true;
  }
  return unwrapped;
}

/** When the script or `<noscript>` holds an article: a way to its nodes. */
function articleIn(el: Element): (() => Node[]) | undefined {
  if (el.localName === 'noscript') {
    if (!el.querySelector(BLOCKS) || wordCount(el.textContent ?? '', ARTICLE_WORDS) < ARTICLE_WORDS)
      return undefined;
    return () => Array.from(el.childNodes);
  }
  const html = el.textContent ?? '';
  if (!/^\s*</.test(html) || !BLOCK_TAG.test(html) || wordCount(html, ARTICLE_WORDS, true) < ARTICLE_WORDS)
    return undefined;
  return () => {
    const holder = el.ownerDocument.createElement('div');
    holder.innerHTML = limitDepth(html, TEMPLATE_DEPTH);
    return Array.from(holder.childNodes);
  };
}

/** Whether `block` holds no text besides `el`'s (other scripts and styles do not count). */
function alone(el: Element, block: Element): boolean {
  const walk = (n: Node): boolean => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c === el) continue;
      if (c.nodeType === 3) {
        if ((c as Text).data.trim()) return false;
      } else if (c.nodeType === 1) {
        const name = (c as Element).localName;
        if (name !== 'script' && name !== 'style' && name !== 'noscript' && !walk(c)) return false;
      }
    }
    return true;
  };
  return walk(block);
}
