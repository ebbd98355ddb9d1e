/**
 * The page less its furniture, from a fresh parse of its html or Readability's copy of the page
 * (the first parse was changed by the cleaning and by Readability): what stands in when no
 * article is found, and where a run of items or a `<main>` is looked for.
 */
import { cleanArticle } from './clean-article';
import { outermostFurniture, statesProduct } from './item-runs';
import { titleHeadingAsReadability } from './headings';
import { replaceWithNodes } from './dom-measure';
import { parse } from './parse';
import { precleanSource } from './preclean';
import type { Work } from './stages';

/**
 * No article found: the whole page less its furniture, from a fresh parse (the first was changed);
 * `cleaned`: by the rules of stage 'preclean' too, as the first was (a hostile tree: as it is), and
 * then the first time Readability's own copy of that page (see taken) rather than a parse.
 */
export function wholePage(w: Work, cleaned = false): HTMLElement {
  const body = (cleaned && !w.broken && taken(w)) || fresh(w, cleaned);
  for (const el of outermostFurniture(body, !!w.rules.articleParts)) el.remove();
  // A form left is around the page (see isFurniture): its content stays, not the form.
  for (const form of Array.from(body.querySelectorAll<Element>('form'))) replaceWithNodes(form);
  titleHeadingAsReadability(body, w.title);
  return body as unknown as HTMLElement;
}

/** The body as Readability first read it (cleaned), once: not parsed and cleaned again. */
function taken(w: Work): Element | undefined {
  const spare = w.spare;
  w.spare = undefined;
  return spare;
}

function fresh(w: Work, cleaned: boolean): Element {
  const doc = parse(w.html, w.baseUrl);
  if (w.opts.exclude?.length) {
    for (const el of w.selectors.all(doc as unknown as Document, w.opts.exclude)) el.remove();
  }
  if (cleaned && !w.broken) {
    try {
      precleanSource(doc as unknown as Document, w.rules, [w.head.title, w.docTitle], w.ld, isProduct(w));
    } catch {
      // left as parsed
    }
  }
  return (doc.body ?? doc.documentElement) as unknown as Element;
}

/**
 * The page less its furniture as it stands in for the article: on a page that states it is a
 * product, and when `clean` (rule productPage), cleaned after Readability as the chosen block is,
 * its grids of other products, link lists and controls gone: a shop's page is its product, not a
 * list of items. A hostile tree (see Work.broken) stays as it is.
 */
export function pageStandingIn(w: Work, page: HTMLElement, clean = false): HTMLElement {
  if (clean && !w.broken && isProduct(w)) cleanArticle(page, w.rules, w.baseUrl);
  return page;
}

/** The page states it is a product (see statesProduct). */
export function isProduct(w: Work): boolean {
  return statesProduct(w.head.meta.get('og:type'), w.ld);
}
