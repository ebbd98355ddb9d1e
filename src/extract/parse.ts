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

/** A CDATA opening in html, or a script's or a style's start tag (whose text may hold one as text). */
const CDATA_OR_RAW = /<(script|style)\b|<!\[CDATA\[/gi;
const RAW_END = { script: /<\/script\s*>/gi, style: /<\/style\s*>/gi };

/**
 * `<![CDATA[` read as browsers read it in html: a bogus comment that ends at the first `>` (the
 * parser reads a section up to `]]>`, and a page with none past the opening lost all that follows;
 * XenForo writes one at the top of its body). Scripts and styles are left as they are. One pass:
 * each search starts where the one before ended.
 */
function withHtmlCdata(html: string): string {
  if (!html.includes('<![CDATA[')) return html;
  const out: string[] = [];
  let at = 0;
  const next = CDATA_OR_RAW;
  next.lastIndex = 0;
  for (let m = next.exec(html); m; m = next.exec(html)) {
    const gt = html.indexOf('>', next.lastIndex);
    if (gt < 0) break;
    if (m[1]) {
      // A script or a style: its text runs to its end tag (none: to the end of the page).
      const end = RAW_END[m[1].toLowerCase() as 'script' | 'style'];
      end.lastIndex = gt + 1;
      if (!end.exec(html)) break;
      next.lastIndex = end.lastIndex;
    } else {
      out.push(html.slice(at, m.index));
      at = gt + 1;
      next.lastIndex = at;
    }
  }
  out.push(html.slice(at));
  return out.join('');
}

// linkedom: a fast, spec-enough DOM for Readability (jsdom is several times slower at parse).
export function parse(page: string, baseUrl: string) {
  const html = withHtmlCdata(page);
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
