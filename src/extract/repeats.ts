/**
 * Blocks that repeat the blocks just before them word for word (rule repeats): a shop's variants
 * each printing the same features, a carousel's clones, a section written twice for two screen
 * sizes. A reader sees them once.
 */
import { wordCount } from './verdict';

/** Repeats shorter than this may be real ones (a list's "Apply now" under each item). */
const REPEAT_WORDS = 10;
/** The most blocks a repeated group holds. */
const GROUP = 12;

/**
 * Under `root`, each run of an element's children that repeats the run before it (the same tags
 * and text, REPEAT_WORDS or more) goes; what is left is searched the same way, children after parents.
 */
export function withoutRepeats(root: Element): void {
  const parents: Element[] = [root];
  while (parents.length > 0) {
    const parent = parents.pop()!;
    const kept = withoutRepeatedRuns(Array.from(parent.children));
    for (let i = kept.length - 1; i >= 0; i--) if (kept[i].firstElementChild) parents.push(kept[i]);
  }
}

/** Removes the runs of `children` that repeat the run before them; returns those left. */
function withoutRepeatedRuns(children: Element[]): Element[] {
  if (children.length < 2 || holdsText(children[0].parentNode!)) return children;
  const texts = children.map((el) => squeeze(el.textContent ?? ''));
  const keys = children.map((el, i) => `${el.localName} ${texts[i]}`);
  const kept: number[] = [];
  for (let i = 0; i < children.length;) {
    const k = repeatAt(keys, texts, kept, i, children);
    if (k === 0) {
      kept.push(i++);
      continue;
    }
    for (let j = i; j < i + k; j++) children[j].remove();
    i += k;
  }
  return kept.map((i) => children[i]);
}

/** How many of the keys from `i` repeat the last ones kept (0: none). */
function repeatAt(keys: string[], texts: string[], kept: number[], i: number, children: Element[]): number {
  for (let k = 1; k <= GROUP && k <= kept.length && i + k <= keys.length; k++) {
    // One paragraph said again may be meant; a block of blocks, or a group, printed twice is a copy.
    if (children[i].localName === 'p' && sameKeys(keys, i, k)) continue;
    let same = true;
    for (let j = 0; j < k && same; j++) same = keys[kept[kept.length - k + j]] === keys[i + j];
    if (same && wordCount(texts.slice(i, i + k).join(' '), REPEAT_WORDS) >= REPEAT_WORDS) return k;
  }
  return 0;
}

/** Whether the `k` keys from `i` are one key. */
function sameKeys(keys: string[], i: number, k: number): boolean {
  for (let j = i + 1; j < i + k; j++) if (keys[j] !== keys[i]) return false;
  return true;
}

/** Text of its own between its children: a paragraph's lines, not a stack of blocks. */
function holdsText(parent: Node): boolean {
  for (let n = parent.firstChild; n; n = n.nextSibling)
    if (n.nodeType === 3 && /\S/.test(n.nodeValue ?? '')) return true;
  return false;
}

/** The text with each run of white space one space, trimmed; as it is when it is so already. */
function squeeze(text: string): string {
  return /\s\s|[^\S ]/.test(text) ? text.replace(/\s+/g, ' ').trim() : text.trim();
}
