/**
 * Before Readability: an article the page holds only in a script's template or a `<noscript>` (a
 * blog engine that writes the post from a `<script type="text/template">`, with a `<noscript>`
 * copy for readers without scripts). Readability removes both; the block they stand in is empty.
 */
import { firstWithin, LEAD_CHARS, replaceWithNodes } from './dom-measure';
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

/** Words a page shows outside its `<noscript>`s at most to be a script's shell. */
const SHELL_WORDS = 100;

/** A shell's `<noscript>` holds this many times the words the page shows, at least. */
const SHELL_RATIO = 4;

/** How many scripts after the heading are looked at. */
const MAX_LOOKED = 16;

/** How deep a template's html may nest once parsed (it goes under an element of the page). */
const TEMPLATE_DEPTH = 50;

/** A script holding html to be written into the page. */
export function isTemplateScript(el: Element): boolean {
  return /^text\/(x-)?template$/i.test((el.getAttribute('type') ?? '').trim());
}

/**
 * The first template script or `<noscript>` after the page's heading, with under LEAD_CHARS of
 * text between them, that is the only text of its block and holds an article's words, is
 * replaced by its content (a cookie box's template stands elsewhere). A second copy beside it
 * (the `<noscript>` after the template) is left to be removed. Says whether one was.
 */
export function unwrapScriptText(scripts: Element[], heading: Element | undefined): boolean {
  if (!heading || scripts.length === 0) return false;
  const candidates = new Set(scripts);
  let content: (() => Node[]) | undefined;
  let looked = 0;
  const found = firstWithin(heading, LEAD_CHARS, (el) => {
    // Each look reads the script and its block: the first few are looked at (a page may hold thousands).
    if (!candidates.has(el) || ++looked > MAX_LOOKED) return false;
    const block = el.parentElement;
    if (!block || /^(BODY|HTML|HEAD)$/.test(block.tagName)) return false;
    content = articleIn(el);
    return !!content && alone(el, block);
  });
  if (!found || !content) return false;
  replaceWithNodes(found, content());
  return true;
}

/**
 * A page that is a script's shell (under SHELL_WORDS words outside its `<noscript>`s, scripts and
 * styles) whose largest `<noscript>` holds an article's words in blocks, SHELL_RATIO times the
 * words shown at least: the page is that
 * `<noscript>`, as a browser without scripts shows it (a forum that writes its thread there for
 * readers without scripts). Says whether it was.
 */
export function unwrapShellNoscript(scripts: Element[], body: Element | null): boolean {
  const noscripts = scripts.filter((el) => el.localName === 'noscript');
  if (!body || noscripts.length === 0) return false;
  let shown = 0;
  const walk = (n: Node): boolean => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) shown += wordCount((c as Text).data, SHELL_WORDS);
      else if (
        c.nodeType === 1 &&
        !/^(script|style|noscript|template)$/.test((c as Element).localName) &&
        !walk(c)
      )
        return false;
      if (shown >= SHELL_WORDS) return false;
    }
    return true;
  };
  if (!walk(body)) return false;
  let best: { el: Element; words: number } | undefined;
  for (const el of noscripts) {
    const words = wordCount(el.textContent ?? '');
    if (!best || words > best.words) best = { el, words };
  }
  if (!best || best.words < Math.max(ARTICLE_WORDS, SHELL_RATIO * shown) || !best.el.querySelector(BLOCKS))
    return false;
  replaceWithNodes(best.el);
  return true;
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
