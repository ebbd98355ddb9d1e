/**
 * Cleaning around Readability: it finds the main block well but keeps what sits inside it —
 * captions, photo credits, "related" link lists, share bars, bylines. These rules remove them.
 */

// Class or id words that mark page furniture rather than article text.
const FURNITURE =
  /(^|[-_\s])(caption|credit|byline|related|share|sharing|social|newsletter|promo|subscribe|subscription|advert|ads?|breadcrumbs?|tags?|author-bio|bio|timestamp|dateline|comments?|recommend(ed|ations)?|more-stories|read-more|also-like|outbrain|taboola|sidebar|signup|inline-cta|cta|disclaimer|copyright|meta|published|updated)([-_\s]|$)/i;

const REMOVE_ALWAYS =
  'script,style,noscript,template,iframe,form,button,figcaption,nav,aside,footer,[role="navigation"],[aria-hidden="true"]';

function classId(el: Element): string {
  return `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
}

function textLen(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, ' ').trim().length;
}

function linkTextLen(el: Element): number {
  let n = 0;
  for (const a of Array.from(el.querySelectorAll<Element>('a'))) n += textLen(a);
  return n;
}

/** Before Readability: drop furniture by its class or id, so it never becomes a candidate. */
export function precleanSource(doc: Document): void {
  for (const el of Array.from(doc.querySelectorAll<Element>('[class],[id]'))) {
    if (el.tagName === 'BODY' || el.tagName === 'HTML' || el.tagName === 'ARTICLE' || el.tagName === 'MAIN')
      continue;
    const ci = classId(el);
    if (ci.length < 200 && FURNITURE.test(ci) && textLen(el) < 400) el.remove();
  }
}

/** Whether el still hangs under root (the article may be a detached tree, so isConnected cannot tell). */
function under(el: Element, root: Element): boolean {
  for (let n: Node | null = el; n; n = n.parentNode) if (n === root) return true;
  return false;
}

/** After Readability: drop captions, link lists and other short furniture from the chosen block. */
export function cleanArticle(body: Element): void {
  for (const el of Array.from(body.querySelectorAll<Element>(REMOVE_ALWAYS))) el.remove();
  for (const el of Array.from(body.querySelectorAll<Element>('ul,ol,div,section,p,table'))) {
    if (!under(el, body)) continue; // inside something removed already
    const len = textLen(el);
    if (len === 0) continue;
    const links = linkTextLen(el);
    // Mostly links: a menu, "related stories" or a tag list.
    if (links / len > 0.6 && len < 1000) el.remove();
  }
}
