/**
 * Table cells that hold lists, not text: names, addresses, figures. Readability scores a cell as a
 * paragraph (pages were laid out in tables), so a table of hundreds of rows, or one cell with a
 * long list of names and affiliations, outscores the article beside it.
 */
import { sentenceEnds } from './sentences';

/** Read of a cell, at most. */
const READ_CHARS = 2000;
/** Prose ends a sentence at least this often; a list's abbreviations ("ret.", "St.") do not. */
const CHARS_PER_SENTENCE = 500;

/** Whether `cell` holds too few sentences to be text (read up to its first 2,000 characters). */
export function isListCell(cell: Element): boolean {
  const text = (cell.textContent ?? '').slice(0, READ_CHARS);
  const wanted = 1 + Math.floor(text.length / CHARS_PER_SENTENCE);
  return sentenceEnds(text, wanted) < wanted;
}
