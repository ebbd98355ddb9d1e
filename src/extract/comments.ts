/**
 * Readers' comment sections, found before Readability: by their class or id words, and by their
 * shape (a run of blocks that each hold a "Reply" control), whatever their names.
 */
import { textLen } from './dom-measure';
import { REPLY } from './vocabulary';

/** Whether a link, button or span says "Reply" or the like (see REPLY). */
export function isReplyControl(el: Element): boolean {
  const text = shortText(el, 40);
  return !!text && REPLY.test(text.trim());
}

/** The text of `el` if it is at most `max` characters long (read no further), else null. */
function shortText(el: Element, max: number): string | null {
  let out = '';
  const walk = (n: Node): boolean => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) {
        out += (c as Text).data;
        if (out.length > max) return false;
      } else if (c.nodeType === 1 && !walk(c)) return false;
    }
    return true;
  };
  return walk(el) ? out : null;
}

/**
 * Comment threads by their shape, whatever their names: a block whose children hold, one by one,
 * a "Reply" control each, are a comment's length (under 3,000 characters) and hold at least half
 * of its text.
 * Two controls in a row meet at the thread: their nearest common ancestor.
 */
export function threads(controls: Element[]): { thread: Element; items: Element[] }[] {
  // The thread each pair of controls in a row meets at, and the items of it the pair sits in.
  const meets = new Map<Element, Set<Element>>();
  for (let i = 1; i < controls.length; i++) {
    const meet = commonAncestor(controls[i - 1], controls[i]);
    if (!meet || /^(BODY|HTML|MAIN|ARTICLE)$/.test(meet.tagName)) continue;
    let items = meets.get(meet);
    if (!items) meets.set(meet, (items = new Set()));
    for (const c of [controls[i - 1], controls[i]]) {
      let item = c;
      while (item.parentElement !== meet) item = item.parentElement!;
      items.add(item);
    }
  }
  const found: { thread: Element; items: Element[] }[] = [];
  for (const [meet, items] of meets) {
    const lengths = [...items].map(textLen);
    // The items hold most of the thread: two reply buttons around a post are not a thread.
    const held = lengths.reduce((a, b) => a + b, 0);
    if (items.size >= 2 && lengths.every((n) => n < 3000) && held * 2 >= textLen(meet))
      found.push({ thread: meet, items: [...items] });
  }
  return found;
}

function commonAncestor(a: Element, b: Element): Element | null {
  const up = new Set<Element>();
  for (let n = a.parentElement; n; n = n.parentElement) up.add(n);
  for (let n = b.parentElement; n; n = n.parentElement) if (up.has(n)) return n;
  return null;
}
