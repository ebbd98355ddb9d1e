/**
 * After Readability: where the article ends. A heading in its second half that announces other
 * content ("Related stories", "Sign up", "12 comments") goes, with all that follows it.
 */
import { textLen, under } from './dom-measure';
import { ARTICLE_END, ARTICLE_END_PHRASE } from './vocabulary';

/**
 * The article's end: a heading that announces other content (see ARTICLE_END) goes, with all that
 * follows it inside its parent, and so on up to the article's root.
 */
export function cutAtArticleEnd(body: Element): void {
  for (const h of Array.from(body.querySelectorAll<Element>('h2,h3,h4,h5,h6'))) {
    if (!under(h, body)) continue;
    const text = (h.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (text.length === 0 || text.length > 60 || !ARTICLE_END.test(text)) continue;
    // Only in the article's second half: a heading near the top is the article's own.
    if (textBefore(h, body) < textLen(body) / 2) continue;
    const after: Element[] = [];
    for (let n: Element | null = h; n && n !== body; n = n.parentElement) {
      for (let x = n.nextElementSibling; x; x = x.nextElementSibling) after.push(x);
    }
    // A heading that only begins like an ending ("More on the vote") may be a section of the
    // article: it ends it only when what follows is little text or mostly links.
    if (!ARTICLE_END_PHRASE.test(text)) {
      let chars = 0;
      let linked = 0;
      for (const x of after) {
        chars += textLen(x);
        for (const a of Array.from(x.querySelectorAll('a'))) linked += textLen(a);
        if (x.localName === 'a') linked += textLen(x);
      }
      if (chars >= 200 && linked < chars / 2) continue;
    }
    for (const x of after) x.remove();
    h.remove();
    return;
  }
}

/** Characters of text in `root` before `el`. */
function textBefore(el: Element, root: Element): number {
  let n = 0;
  const walk = (node: Node): boolean => {
    if (node === el) return true;
    if (node.nodeType === 3) n += (node.textContent ?? '').trim().length;
    for (const c of Array.from(node.childNodes)) if (walk(c)) return true;
    return false;
  };
  walk(root);
  return n;
}
