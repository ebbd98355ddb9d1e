/**
 * An html page parsed as a browser would hold it (a fragment in a body, a base for its links),
 * no element deeper than MAX_DEPTH.
 */
// First: linkedom must find its event target replaced when it loads.
import { readClassFromAttribute } from '../tuning/linkedom';
import { Element as DomElement, parseHTML } from 'linkedom';
import { type ElementTree, treeDepth } from './element-tree';
import { MAX_DEPTH, fewTags, limitDepth } from './flatten';

readClassFromAttribute(DomElement);

export type Parsed = ReturnType<typeof parse>;

// linkedom: a fast, spec-enough DOM for Readability (jsdom is several times slower at parse).
export function parse(html: string, baseUrl: string) {
  let { document } = parseHTML(html);
  // A fragment (no <html>/<body>): browsers put it in a body, so do the same.
  if (document.documentElement?.tagName !== 'HTML' || !document.body)
    document = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`).document;
  else moveIntoBody(document.body as unknown as Node);
  // Readability resolves relative links against the document's base.
  if (!document.querySelector('base[href]') && document.head) {
    const base = document.createElement('base');
    base.setAttribute('href', baseUrl);
    document.head.appendChild(base);
  }
  return document;
}

/** An html fragment (an article's own elements) in a body of its own. */
export function parseFragment(html: string) {
  return parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`).document;
}

/**
 * A page with no <body> tag: the parser makes an empty body after the head and leaves the page's
 * content beside it. Browsers put what follows the head in the body; so does this.
 */
function moveIntoBody(body: Node): void {
  for (let n = body.nextSibling; n;) {
    const next = n.nextSibling;
    body.appendChild(n);
    n = next;
  }
}

/**
 * The page parsed, no element deeper than MAX_DEPTH, and the html that was parsed. A page with
 * few tags is parsed as it is and its tree measured (deep nesting costs the parser time in the
 * square of the depth, bounded here by the number of tags): a page is tokenized once, not twice.
 * A deeper tree, or a page with more tags, is parsed from limitDepth's html.
 */
export function parseWithinDepth(page: string, baseUrl: string): { html: string; source: Parsed } {
  if (fewTags(page)) {
    const source = parse(page, baseUrl);
    if (treeDepth(source.documentElement as unknown as ElementTree) <= MAX_DEPTH)
      return { html: page, source };
  }
  const html = limitDepth(page);
  return { html, source: parse(html, baseUrl) };
}
