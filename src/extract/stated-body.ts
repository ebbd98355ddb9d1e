/**
 * The article as the page states it in its JSON-LD (`articleBody`): when the html's article came
 * out far shorter, a block the rules did not find, or a page whose text is written by its scripts.
 */
import { typeOf, type Json } from './json-ld';
import { statedLines } from './stated-text';
import { wordCount } from './verdict';

/** What an articleBody may hold: a page may state megabytes. */
const MAX_STATED_CHARS = 1 << 20;

/** The longest `articleBody` of the page's article-like objects, as paragraphs; undefined when none. */
export function statedParagraphs(ld: Json[]): string[] | undefined {
  let best: string | undefined;
  for (const o of ld) {
    const body = o.articleBody;
    if (typeof body !== 'string' || !/article|posting|report|blog|news|review/i.test(typeOf(o))) continue;
    if (!best || body.length > best.length) best = body;
  }
  if (!best) return undefined;
  // A body written as html: its tags are the paragraph breaks.
  const paragraphs = statedLines(best.slice(0, MAX_STATED_CHARS));
  return paragraphs.length > 0 ? paragraphs : undefined;
}

/** Below this many words the html's article is short enough to check against the stated one. */
const CHECKED_WORDS = 2000;

/**
 * Whether the stated article should stand in for the html's: it has at least 50 words and over
 * twice as many as the html's article.
 */
export function statedIsFuller(stated: string[], found: string): boolean {
  const foundWords = wordCount(found, CHECKED_WORDS);
  if (foundWords >= CHECKED_WORDS / 2) return false;
  const statedWords = wordCount(stated.join('\n'), Math.max(50, 2 * foundWords + 1));
  return statedWords >= 50 && statedWords > 2 * foundWords;
}
