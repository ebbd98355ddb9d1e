/** Whether text is written in sentences: where a sentence ends, and how many do. */

/**
 * A sentence's end: a full stop, question or exclamation mark after a word of two letters or more
 * (not an initial: "David W. Bligh"), then a space or the end.
 */
const SENTENCE_END = /\p{L}{2}[)"'»”’]?[.!?…。！？](?=\s|$)/gu;

/** Sentence ends in `text`, counted up to `max`. */
export function sentenceEnds(text: string, max: number): number {
  SENTENCE_END.lastIndex = 0;
  let found = 0;
  while (found < max && SENTENCE_END.exec(text)) found++;
  return found;
}
