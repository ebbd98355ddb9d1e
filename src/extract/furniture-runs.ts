/**
 * Blocks named as furniture that are a list's items (rule furnitureRuns): a list of papers puts each
 * entry's title, authors and subjects in a block named `meta`, a shop each product's name and price
 * in a `caption`. The furniture rule drops short blocks so named (a byline, a date); these stay.
 */
import { classId, textLen } from './dom-measure';
import { outermostFurniture } from './item-runs';
import { FURNITURE } from './vocabulary';

/**
 * Like blocks named as furniture are items' parts when there are RUN_ITEMS or more, holding
 * RUN_SHARE of the page's text (less its furniture: a shop's menus can outweigh its grid).
 */
const RUN_ITEMS = 4;
const RUN_SHARE = 0.4;
/** Their text at least (characters) before the page's is measured. */
const RUN_CHARS = 1000;
/** A block named as furniture this long or longer is not furniture anyway. */
export const FURNITURE_CHARS = 400;

/**
 * Of the `named` elements of a page (its `body`), the short blocks named as furniture (`meta`,
 * `tags`, `credit`…) that stand in a run of their tag and class holding RUN_SHARE of the page's
 * text or more. A byline or a tag list repeated on a page of teasers holds far less. Elements whose
 * tag `skipped` names are not judged; each length measured is kept in `lens`.
 */
export function furnitureRuns(
  named: Element[],
  body: Element | null,
  skipped: RegExp,
  lens: Map<Element, number>,
): Set<Element> {
  const groups = new Map<string, { els: Element[]; len: number }>();
  for (const el of named) {
    if (skipped.test(el.tagName)) continue;
    const ci = classId(el);
    if (ci.length >= 200 || !FURNITURE.test(ci)) continue;
    const len = textLen(el);
    lens.set(el, len);
    if (len >= FURNITURE_CHARS) continue;
    const key = `${el.localName} ${el.getAttribute('class') ?? ''}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { els: [], len: 0 }));
    g.els.push(el);
    g.len += len;
  }
  const spared = new Set<Element>();
  let total = -1;
  for (const g of groups.values()) {
    if (g.els.length < RUN_ITEMS || g.len < RUN_CHARS) continue;
    if (total < 0) total = body ? lessFurniture(body) : 0;
    if (g.len >= RUN_SHARE * total) for (const el of g.els) spared.add(el);
  }
  return spared;
}

/** The length of the page's text less its furniture's (see isFurniture). */
function lessFurniture(body: Element): number {
  return outermostFurniture(body).reduce((len, el) => len - textLen(el), textLen(body));
}
