/**
 * The page less its furniture, from a fresh parse of its html (the first parse was changed by the
 * cleaning and by Readability): what stands in when no article is found, and where a run of items
 * or a `<main>` is looked for.
 */
import { isFurniture, FURNITURE_SELECTOR } from './item-runs';
import { titleHeadingAsReadability } from './headings';
import { replaceWithNodes } from './dom-measure';
import { parse } from './parse';
import { precleanSource } from './preclean';
import type { Work } from './stages';

/**
 * No article found: the whole page less its furniture, from a fresh parse (the first was changed);
 * `cleaned`: by the rules of stage 'preclean' too, as the first was (a hostile tree: as it is).
 */
export function wholePage(w: Work, cleaned = false): HTMLElement {
  const body = (cleaned && !w.broken && taken(w)) || fresh(w, cleaned);
  let gone: Element | undefined;
  for (const el of Array.from(body.querySelectorAll<Element>(FURNITURE_SELECTOR))) {
    if (gone?.contains(el)) continue;
    if (isFurniture(el, !!w.rules.articleParts)) (gone = el).remove();
    // A form around the page (see isFurniture) is the page: its content stays, not the form.
    else if (el.localName === 'form') replaceWithNodes(el);
  }
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
      precleanSource(doc as unknown as Document, w.rules, [w.head.title, w.docTitle], w.ld);
    } catch {
      // left as parsed
    }
  }
  return (doc.body ?? doc.documentElement) as unknown as Element;
}
