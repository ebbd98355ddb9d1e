/**
 * A page's `<main>` (rule mainBlock): on a page that does not state it is an article, the one
 * element the page names as its main content, when it holds half again the words of the block
 * Readability chose. A landing page, a service's or a shop's page is a stack of short sections (a
 * pitch, the features, the plans, the questions), and Readability keeps the one with the most prose.
 */
import { FURNITURE_SELECTOR as FURNITURE } from './item-runs';
import { wordCount } from './verdict';

/** `<main>` stands in when it holds this many times the chosen block's words (and of MAIN_WORDS). */
const MAIN_TIMES = 1.5;
const MAIN_WORDS = 20;

/** A chosen block of fewer words than this may be a corner of a page of items (see isCorner). */
const CORNER_WORDS = 100;

/**
 * Whether the chosen block (of `words`, its text `text`) was a corner of a page of items, a grid of
 * cards each a link and a line: short, and not opening with the page's title or heading (`titles`:
 * a short post does). Its `<main>` is then cleaned as a run's block is, its teasers kept.
 */
export function isCorner(words: number, text: string, titles: string[]): boolean {
  const opening = text.trimStart();
  return words < CORNER_WORDS && !titles.some((t) => t.trim() !== '' && opening.startsWith(t.trim()));
}

/** The words `<main>` needs to stand in for a block of `words`. */
export function wordsForMain(words: number): number {
  return MAIN_TIMES * Math.max(words, MAIN_WORDS);
}

/** The page's one main element (`<main>` or `role="main"`) when it holds `enough` words; none when it names two. */
export function mainOf(page: Element, enough: number): Element | undefined {
  const mains = page.querySelectorAll('main,[role="main"]');
  if (mains.length !== 1) return undefined;
  return wordCount(mains[0].textContent ?? '', enough) >= enough ? mains[0] : undefined;
}

/**
 * The words of the page's one main element, as it stands, less those of the furniture it holds
 * (what the page less its furniture leaves out); 0 when it has none, or names two.
 */
export function mainWords(page: Element): number {
  const main = mainOf(page, 0);
  if (!main) return 0;
  let words = wordCount(main.textContent ?? '');
  for (const el of Array.from(main.querySelectorAll(FURNITURE)))
    if (!el.parentElement?.closest(FURNITURE)) words -= wordCount(el.textContent ?? '');
  return words;
}
