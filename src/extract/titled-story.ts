/**
 * Before Readability, on a page that streams several stories: the story the page's title names
 * stays, the others built the same way go.
 */
import { textLen } from './dom-measure';

/** Words of a title or heading, lower-cased, for comparing them. */
function words(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * A page that streams several stories (the next article loaded below the first, each in the same
 * template) names one of them in its title. The heading that the title repeats marks that story.
 * Its siblings built the same way (same element and class) that hold a heading at the same place
 * in the same template, and a story's length of text, are the other stories, and go.
 */
export function keepTitledStory(headings: Element[], heading: Element | undefined): void {
  if (!heading || underTopHeading(headings, heading)) return;
  const sig = (el: Element) => `${el.localName}.${el.getAttribute('class') ?? ''}`;
  // The titled story's ancestors, nearest first: the story is one of them.
  const chain: Element[] = [];
  for (let n = heading.parentElement; n && !/^(BODY|HTML)$/.test(n.tagName); n = n.parentElement)
    chain.push(n);
  const sigs = chain.map(sig);
  // Another story: a heading like the titled one, under ancestors built the same way up to an
  // element like one of the titled story's, beside it (or inside what is beside it).
  for (const other of headings) {
    if (other === heading || !other.isConnected || sig(other) !== sig(heading)) continue;
    let a: Element | null = other.parentElement;
    for (let k = 0; a && k < chain.length && sig(a) === sigs[k] && a !== chain[k]; k++, a = a.parentElement) {
      const parent = chain[k].parentElement;
      if (!parent?.contains(a) || a.contains(heading) || textLen(a) < 500) continue;
      let beside: Element = a;
      while (beside.parentElement !== parent) beside = beside.parentElement!;
      if (beside !== chain[k]) beside.remove();
      break;
    }
  }
}

/**
 * Whether an h1 of a headline's length (STORY_TITLE_WORDS or more: not a logo's) comes before the
 * titled heading, itself an h2 or h3: that heading is a section of the article under the h1, and
 * its siblings built the same way are the article's other sections, not other stories.
 */
function underTopHeading(headings: Element[], heading: Element): boolean {
  if (heading.localName === 'h1') return false;
  for (const h of headings) {
    if (h === heading) return false;
    if (h.localName === 'h1' && words(h.textContent ?? '').split(' ').length >= STORY_TITLE_WORDS)
      return true;
  }
  return false;
}

/** The fewest words of an h1 that titles an article (a site's name in an h1 is shorter). */
const STORY_TITLE_WORDS = 4;

/**
 * The heading (h1 to h3, in document order) that the page's title repeats: the same words, or three
 * or more of them that begin or end the title.
 */
export function titledHeading(headings: Element[], titles: string[]): Element | undefined {
  const wanted = titles.map(words).filter((t) => t.length > 0);
  if (wanted.length === 0) return undefined;
  const named = (text: string) => {
    const h = words(text);
    if (!h) return false;
    return wanted.some(
      (t) => t === h || (h.split(' ').length >= 3 && (t.startsWith(`${h} `) || t.endsWith(` ${h}`))),
    );
  };
  return headings.find((h) => named(h.textContent ?? ''));
}
