/**
 * Cleaning around Readability: it finds the main block well but keeps what sits inside it —
 * captions, photo credits, "related" link lists, share bars, bylines. These rules remove them.
 */

// Class or id words that mark page furniture rather than article text.
const FURNITURE =
  /(^|[-_\s])(caption|credit|byline|related|share|sharing|social|newsletter|promo|subscribe|subscription|advert|ads?|breadcrumbs?|tags?|author-bio|bio|timestamp|dateline|comments?|recommend(ed|ations)?|more-stories|read-more|also-like|outbrain|taboola|sidebar|signup|inline-cta|cta|disclaimer|copyright|meta|published|updated)([-_\s]|$)/i;

const REMOVE_ALWAYS =
  'script,style,noscript,template,iframe,form,button,figcaption,nav,aside,footer,[role="navigation"],[aria-hidden="true"]';

function classId(el: Element): string {
  return `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
}

function textLen(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, ' ').trim().length;
}

/** Rules that can be turned off one by one, to measure what each earns (test/support/corpus.ts). */
export interface CleanRules {
  /** The article ends at a "related", "recommended", "newsletter" or "read next" heading. */
  articleEnd?: boolean;
  /** Lines that are only an ad label, a control's name or a posted/updated stamp go. */
  uiLines?: boolean;
}

export const ALL_RULES: Required<CleanRules> = { articleEnd: true, uiLines: true };

/** The whole text of a block that is page furniture: an ad label, a control, a gallery counter, a stamp. */
const UI_LINE =
  /^(advert(isement)?|sponsored( content)?|sign in|log in|close|caption|print|share( this)?( article| story| page)?|image \d+ of \/? ?\d+|\d+ of \d+|this slideshow requires javascript\.?|(published|posted|updated|last updated|first published)\s*:?\s*.{0,60})$/i;

/** What a heading that ends the article says: what follows is other pages' teasers or a sign-up. */
const ARTICLE_END =
  /^(related(\s+(articles?|stories|posts?|content|coverage|reading|topics|news|links|videos))?|recommended(\s+(for you|stories|articles|reading|videos))?|more\s+(from|on|in|stories|articles|news|like this|to read|to explore)\b.*|read\s+(more|next|also)\b.*|you\s+(may|might)\s+(also\s+)?(like|enjoy|be interested in)\b.*|(most\s+)?(popular|read|viewed|shared)(\s+(now|stories|articles|today))?|trending(\s+now)?|top stories|also\s+(read|on|see)\b.*|what to read next|up next|next\s+(story|article|up)|sign up\b.*|subscribe\b.*|(our|get the|the)?\s*newsletters?\b.*|don'?t miss\b.*|latest\s+(news|stories|articles|posts))[\s:.!]*$/i;

/** Before Readability: drop furniture by its class or id, so it never becomes a candidate. */
export function precleanSource(doc: Document): void {
  for (const el of Array.from(doc.querySelectorAll<Element>('[class],[id]'))) {
    if (el.tagName === 'BODY' || el.tagName === 'HTML' || el.tagName === 'ARTICLE' || el.tagName === 'MAIN')
      continue;
    const ci = classId(el);
    if (ci.length < 200 && FURNITURE.test(ci) && textLen(el) < 400) el.remove();
  }
}

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
    for (let n: Element | null = h; n && n !== body; n = n.parentElement) {
      while (n.nextElementSibling) n.nextElementSibling.remove();
    }
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

/** Whether el still hangs under root (the article may be a detached tree, so isConnected cannot tell). */
function under(el: Element, root: Element): boolean {
  for (let n: Node | null = el; n; n = n.parentNode) if (n === root) return true;
  return false;
}

/** After Readability: drop captions, link lists and other short furniture from the chosen block. */
export function cleanArticle(body: Element, rules: CleanRules = ALL_RULES): void {
  if (rules.articleEnd) cutAtArticleEnd(body);
  for (const el of Array.from(body.querySelectorAll<Element>(REMOVE_ALWAYS))) el.remove();
  // Every element's text and link-text length in one walk: measuring each element anew would read
  // its subtree once per ancestor. The decisions below remove subtrees only after their
  // ancestors were judged, so these lengths are the ones each check would have read.
  const lens = measure(body);
  const BLOCK = /^(UL|OL|DIV|SECTION|P|TABLE)$/;
  const LINE = /^(P|DIV|SPAN|LI|H2|H3|H4|H5|H6)$/;
  for (const el of Array.from(
    body.querySelectorAll<Element>('ul,ol,div,section,p,table,span,li,h2,h3,h4,h5,h6'),
  )) {
    if (!under(el, body)) continue; // inside something removed already
    const m = lens.get(el);
    if (!m || m.text === 0) continue;
    // Mostly links: a menu, "related stories" or a tag list.
    if (BLOCK.test(el.tagName) && m.link / m.text > 0.6 && m.text < 1000) {
      el.remove();
      continue;
    }
    // A line that is only an ad label, a control or a stamp (a block of blocks is judged by them).
    if (rules.uiLines && LINE.test(el.tagName) && m.text <= 80 && !m.blocks) {
      if (UI_LINE.test((el.textContent ?? '').replace(/\s+/g, ' ').trim())) el.remove();
    }
  }
}

interface Lengths {
  /** Characters of text, whitespace runs counted as one. */
  text: number;
  /** Of which inside links. */
  link: number;
  /** Whether it holds a p, div or li. */
  blocks: boolean;
}

function measure(root: Element): Map<Element, Lengths> {
  const out = new Map<Element, Lengths>();
  const walk = (el: Element, inLink: boolean): Lengths => {
    const m: Lengths = { text: 0, link: 0, blocks: false };
    const link = inLink || el.localName === 'a';
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) {
        const n = collapsedLength((c as Text).data);
        m.text += n;
        if (link) m.link += n;
      } else if (c.nodeType === 1) {
        const child = c as Element;
        const cm = walk(child, link);
        m.text += cm.text;
        m.link += cm.link;
        m.blocks ||=
          cm.blocks || child.localName === 'p' || child.localName === 'div' || child.localName === 'li';
      }
    }
    out.set(el, m);
    return m;
  };
  walk(root, false);
  return out;
}

/** `s.replace(/\s+/g, ' ').length`, without building the string. */
export function collapsedLength(s: string): number {
  let n = 0;
  let space = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const isSpace =
      c === 32 ||
      (c >= 9 && c <= 13) ||
      (c > 127 &&
        (c === 0xa0 ||
          c === 0x1680 ||
          (c >= 0x2000 && c <= 0x200a) ||
          c === 0x2028 ||
          c === 0x2029 ||
          c === 0x202f ||
          c === 0x205f ||
          c === 0x3000 ||
          c === 0xfeff));
    if (!isSpace || !space) n++;
    space = isSpace;
  }
  return n;
}
