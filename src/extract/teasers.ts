/**
 * After Readability: grids of teasers for the site's other pages ("more stories"), found by their
 * shape rather than their class, and removed.
 */
import { HEADING, type Lengths, under } from './dom-measure';

/** Whether `href` leads to another page of the site of `page` (the same host, "www." aside). */
function otherPageOfSite(href: string, page: URL): boolean {
  let u: URL;
  try {
    u = new URL(href, page);
  } catch {
    return false;
  }
  const host = (h: string) => h.replace(/^www\./, '');
  return host(u.host) === host(page.host) && (u.pathname !== page.pathname || u.search !== page.search);
}

/**
 * Teasers of this site's other pages: blocks under 500 characters led by a heading that is all one
 * link to another page of this site. A block whose children are mostly two or more of them is a
 * "more stories" grid, wherever it sits and whatever its class: it goes. An article's own
 * subheadings are not links, or link to themselves; a list of products links to the shops.
 */
export function removeTeasers(body: Element, lens: Map<Element, Lengths>, pageUrl: string): void {
  let page: URL;
  try {
    page = new URL(pageUrl);
  } catch {
    return;
  }
  // The headings that are all one link to another page of the site; then the blocks they lead.
  const items = new Map<Element, Set<Element>>();
  for (const [h, hm] of lens) {
    if (!HEADING.test(h.tagName) || hm.text === 0 || hm.link !== hm.text) continue;
    const href = (h.closest('a') ?? h.querySelector('a'))?.getAttribute('href');
    if (!href || !otherPageOfSite(href, page)) continue;
    // Each block under 500 characters that it leads (it is the block's first heading) is a teaser
    // in the block's parent.
    for (let x: Element = h; x.parentElement && x.parentElement !== body; x = x.parentElement) {
      if (lens.get(x)!.text >= 500) break;
      if (x !== h && x.querySelector('h2,h3,h4,h5,h6') !== h) break;
      const parent = x.parentElement;
      let set = items.get(parent);
      if (!set) items.set(parent, (set = new Set()));
      set.add(x);
    }
  }
  for (const [el, teasers] of items) {
    if (teasers.size < 2 || !/^(DIV|SECTION|UL|OL)$/.test(el.tagName) || !under(el, body)) continue;
    let chars = 0;
    for (const t of teasers) chars += lens.get(t)!.text;
    if (chars >= 0.6 * lens.get(el)!.text) el.remove();
  }
}
