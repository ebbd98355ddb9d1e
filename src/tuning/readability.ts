/**
 * Readability's private methods patched on one reader, so that three of its steps cost less and
 * find the same article (see tuneReadability).
 */
import type { Readability } from '@mozilla/readability';

/** Elements under `root` whose tag is one of `tags` (upper case), in document order. */
export type ElementsWithTags = (root: never, tags: string[]) => unknown[];

interface ReadabilityInternals {
  REGEXPS: { byline: RegExp };
  ELEMENT_NODE: number;
  _getAllNodesWithTag: ElementsWithTags;
  _isValidByline(node: Element, matchString: string): boolean;
  _isElementWithoutContent(node: Element): boolean;
  _getNodeAncestors(node: Element, maxDepth?: number): Element[];
  _isProbablyVisible(node: Element): boolean;
  _doc: Document;
  _grabArticle(): Element | null;
  _postProcessContent(el: Element): void;
}

/**
 * Four of Readability's steps done the same way for less: its element lists by tag name by one
 * walk over elements, not a CSS selector compiled and matched against every node at each call (a
 * sixth of its time); its visibility test reads `style` only on elements that have the attribute
 * (the getter builds a style declaration per element); its byline and empty-block tests, asked of
 * every element, stop reading text where the answer is known (see textFirst); and the article it
 * found is not serialized for a debug line that is never printed (`log("Grabbed: " + innerHTML)`
 * runs even with debug off); the page it starts again from is kept as a tree (see keepAsTree).
 */
export function tuneReadability(
  reader: Readability<Element>,
  elementsWithTags: ElementsWithTags,
  /** Cells that do not score as text (see skipScoring). */
  unscored?: (cell: Element) => boolean,
  /** Given the page as Readability first read it (see keepAsTree), once it is done with it. */
  spare?: (page: Element) => void,
): void {
  const r = reader as unknown as ReadabilityInternals;
  if (unscored) skipScoring(r, unscored);
  r._getAllNodesWithTag = elementsWithTags;
  const visible = r._isProbablyVisible;
  r._isProbablyVisible = function (node) {
    if (node.hasAttribute('style')) return visible.call(this, node);
    return (
      !node.hasAttribute('hidden') &&
      (node.getAttribute('aria-hidden') !== 'true' ||
        (typeof node.className === 'string' && node.className.includes('fallback-image')))
    );
  };
  textFirst(r);
  const grab = r._grabArticle;
  r._grabArticle = function () {
    const body = this._doc.body as Element | null;
    const kept = body ? keepAsTree(body) : undefined;
    let el: Element | null;
    try {
      el = grab.call(this);
    } finally {
      if (body) delete (body as { innerHTML?: string }).innerHTML;
    }
    if (kept && spare) spare(kept);
    // Shadows the getter until the next step, which is the one after the debug line.
    if (el) Object.defineProperty(el, 'innerHTML', { value: '', configurable: true });
    return el;
  };
  const post = r._postProcessContent;
  r._postProcessContent = function (el) {
    delete (el as { innerHTML?: string }).innerHTML;
    post.call(this, el);
  };
}

/** What the body's html reads as while it is kept as a tree: no page holds a NUL. */
const KEPT = '\u0000kept';

/**
 * Readability keeps the page's html (`body.innerHTML`) to start again from when a try finds too
 * little, and parses it again for each new try. The same page kept as a copy of its tree, and put
 * back as a copy of that: serializing costs twice a copy, parsing three times a copy's move.
 */
function keepAsTree(body: Element): Element {
  const kept = body.cloneNode(true) as Element;
  const shadow = () =>
    Object.defineProperty(body, 'innerHTML', {
      configurable: true,
      get: () => KEPT,
      set(html: string) {
        if (html === KEPT) {
          body.replaceChildren();
          const copy = kept.cloneNode(true);
          while (copy.firstChild) body.appendChild(copy.firstChild);
          return;
        }
        delete (body as { innerHTML?: string }).innerHTML;
        body.innerHTML = html;
        shadow();
      },
    });
  shadow();
  return kept;
}

/**
 * Readability asks each element it walks whether it is the byline and whether it is an empty
 * block, and reads its whole text first (`textContent`: every element's subtree, once per
 * ancestor; a tenth of an extraction). The same answers: the byline's names and attributes are
 * read before its text, and a block is empty once no text under it holds more than white space.
 */
function textFirst(r: ReadabilityInternals): void {
  const byline = r._isValidByline;
  r._isValidByline = function (node, matchString) {
    const itemprop = node.getAttribute('itemprop');
    const named =
      node.getAttribute('rel') === 'author' ||
      (itemprop !== null && itemprop.includes('author')) ||
      this.REGEXPS.byline.test(matchString);
    return named && byline.call(this, node, matchString);
  };
  r._isElementWithoutContent = function (node) {
    return (
      node.nodeType === this.ELEMENT_NODE &&
      !holdsText(node) &&
      (!node.children.length ||
        node.children.length ===
          node.getElementsByTagName('br').length + node.getElementsByTagName('hr').length)
    );
  };
}

/** Whether text (or CDATA) other than white space lies under `node`, as `textContent.trim()` would say. */
function holdsText(node: Node): boolean {
  for (let c = node.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3 || c.nodeType === 4) {
      if (/\S/.test(c.nodeValue ?? '')) return true;
    } else if (c.nodeType === 1 && holdsText(c)) return true;
  }
  return false;
}

/**
 * Readability scores a table cell as it scores a paragraph, for pages laid out in tables; the
 * cells `unscored` names are left out. It scores an element only when it has ancestors (its call
 * with a depth of 5): for those cells that call answers none.
 */
function skipScoring(r: ReadabilityInternals, unscored: (cell: Element) => boolean): void {
  const ancestors = r._getNodeAncestors;
  r._getNodeAncestors = function (node, maxDepth) {
    if (maxDepth === 5 && node.tagName === 'TD' && unscored(node)) return [];
    return ancestors.call(this, node, maxDepth);
  };
}

interface ReadabilityPatterns {
  REGEXPS: { unlikelyCandidates: RegExp; okMaybeItsACandidate: RegExp };
  UNLIKELY_ROLES: string[];
}

/**
 * The names and roles for which Readability drops an element as an unlikely candidate, read from
 * its prototype so that a rule steering clear of them cannot drift from the version installed.
 */
export function unlikelyPatterns(ReadabilityClass: unknown): {
  unlikely: RegExp;
  maybe: RegExp;
  roles: string[];
} {
  const p = (ReadabilityClass as { prototype: ReadabilityPatterns }).prototype;
  return {
    unlikely: p.REGEXPS.unlikelyCandidates,
    maybe: p.REGEXPS.okMaybeItsACandidate,
    roles: p.UNLIKELY_ROLES,
  };
}

/** Readability's own rules for a title heading, asked of a reader that was never run. */
interface HeadingRules {
  _articleTitle: string;
  _headerDuplicatesTitle(node: Element): boolean;
  _replaceNodeTags(nodes: Element[], tag: string): void;
  log(...args: unknown[]): void;
}

/**
 * Readability's treatment of headings, on a body it did not read: the first h1 or h2 that
 * repeats the title goes, and any other h1 becomes an h2 (its `_headerDuplicatesTitle` and
 * `_replaceNodeTags`, on a reader of its prototype that was never run).
 */
export function readabilityTitleHeadings(ReadabilityClass: unknown, body: Element, title: string): void {
  const rules = Object.assign(
    Object.create((ReadabilityClass as { prototype: object }).prototype) as HeadingRules,
    { _articleTitle: title, log: () => undefined },
  );
  const heading = Array.from(body.querySelectorAll<Element>('h1,h2')).find((h) =>
    rules._headerDuplicatesTitle(h),
  );
  heading?.remove();
  rules._replaceNodeTags(Array.from(body.querySelectorAll<Element>('h1')), 'h2');
}
