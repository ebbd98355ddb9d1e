/**
 * Paragraphs set apart by single line breaks, made paragraphs before Readability reads them.
 */
import { collapsedLength } from './dom-measure';

/** Text on each side of a line break, at least, for the break to end a paragraph. */
const PARAGRAPH_LINE = 120;

/**
 * Paragraphs set apart by a single line break: Readability takes two breaks in a row for a
 * paragraph's end, and reads a block of such lines as one paragraph, which scores as one (a long
 * description lost to a sidebar's box). A break between two long runs of text is doubled.
 */
export function breakParagraphs(breaks: Element[]): void {
  for (const br of breaks) {
    if (!br.parentNode || nextNode(br)?.nodeName === 'BR') continue;
    if (
      lineLength(br, 'previousSibling') >= PARAGRAPH_LINE &&
      lineLength(br, 'nextSibling') >= PARAGRAPH_LINE
    )
      br.after(br.ownerDocument.createElement('br'));
  }
}

/** The node after `node` that is not white space. */
function nextNode(node: Node): Node | null {
  let n = node.nextSibling;
  while (n && n.nodeType === 3 && !(n as Text).data.trim()) n = n.nextSibling;
  return n;
}

/** Characters of inline text beside `br` on one side, up to the next break or block (read up to PARAGRAPH_LINE). */
function lineLength(br: Element, side: 'previousSibling' | 'nextSibling'): number {
  let n = 0;
  for (let c = br[side]; c && n < PARAGRAPH_LINE; c = c[side]) {
    if (c.nodeType === 3) n += collapsedLength((c as Text).data.trim());
    else if (c.nodeType === 1) {
      const el = c as Element;
      if (el.localName === 'br' || !INLINE.test(el.localName)) break;
      n += collapsedLength((el.textContent ?? '').trim());
    }
  }
  return n;
}

const INLINE =
  /^(a|abbr|b|bdi|bdo|cite|code|data|dfn|em|font|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|time|u|var)$/;
