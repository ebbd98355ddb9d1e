/**
 * Walks over an element tree by its plain fields, in document order and never into a <template>'s
 * content: how deep the tree goes, and its elements by tag name (read along linkedom's list of
 * nodes where the tree is linkedom's).
 */
import { listedElements } from '../tuning/linkedom';

/** The fields of an element that a walk reads. */
export interface ElementTree {
  localName: string;
  firstElementChild: ElementTree | null;
  nextElementSibling: ElementTree | null;
  parentNode: ElementTree | null;
}

/** How many elements deep the tree under `root` goes, `root` counting as 1. */
export function treeDepth(root: ElementTree): number {
  let deepest = 1;
  let depth = 1;
  let el = root.localName === 'template' ? null : root.firstElementChild;
  if (el) depth++;
  while (el) {
    if (depth > deepest) deepest = depth;
    const child = el.localName === 'template' ? null : el.firstElementChild;
    if (child) {
      el = child;
      depth++;
      continue;
    }
    while (el !== root && !el.nextElementSibling) {
      el = el.parentNode!;
      depth--;
    }
    el = el === root ? null : el.nextElementSibling;
  }
  return deepest;
}

/**
 * The elements under `root` with one of `tags` (any case), in document order, as querySelectorAll
 * gives them (the content of a <template> is not searched).
 */
export function elementsWithTags(root: ElementTree, tags: string[]): ElementTree[] {
  // localName: a plain field; tagName upper-cases it at every read.
  const wanted = new Set(tags.map((t) => t.toLowerCase()));
  const listed = listedElements(root, wanted) as ElementTree[] | undefined;
  if (listed) return listed;
  const out: ElementTree[] = [];
  let el = root.firstElementChild;
  while (el) {
    if (wanted.has(el.localName)) out.push(el);
    const child = el.localName === 'template' ? null : el.firstElementChild;
    if (child) {
      el = child;
      continue;
    }
    while (el !== root && !el.nextElementSibling) el = el.parentNode!;
    el = el === root ? null : el.nextElementSibling;
  }
  return out;
}
