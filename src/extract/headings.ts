/**
 * The article's outer shape, the same whichever way it was found: no wrapper of Readability's
 * around it, and the page's title heading handled as Readability handles it; and its title cut
 * at a dash as Readability cuts at a hyphen.
 */
import { Readability } from '@mozilla/readability';
import { readabilityTitleHeadings } from '../tuning/readability';

/**
 * Readability puts the article in `<div class="page" id="readability-page-1">`: the article is
 * the elements inside it.
 */
export function unwrapPage(root: Element): void {
  const page = root.firstElementChild;
  if (!page || page.id !== 'readability-page-1' || root.children.length !== 1) return;
  while (page.firstChild) root.insertBefore(page.firstChild, page);
  page.remove();
}

/**
 * A body taken whole (no article found) gets Readability's treatment of headings: the first h1
 * or h2 that repeats the title goes (the envelope's `title` has it), and any other h1 becomes an
 * h2. Readability's own rules, so both ways of finding the content agree on every page.
 */
export function titleHeadingAsReadability(body: Element, title: string): void {
  readabilityTitleHeadings(Readability, body, title);
}

/**
 * Readability cuts a site name off the document title at " | ", " - " and the like, but not at an
 * en or em dash. The same rule for those: the part before the last dash, when it keeps at least five
 * words (Readability's threshold for a plain hyphen). A title the page's metadata gives is kept
 * whole, as Readability keeps it.
 */
export function withoutSiteName(title: string): string {
  const cut = Math.max(title.lastIndexOf(' – '), title.lastIndexOf(' — '));
  if (cut < 0) return title;
  const head = title.slice(0, cut).trim();
  return head.split(/\s+/).length >= 5 ? head : title;
}
