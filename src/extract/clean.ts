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
  /** An embedded post's wrappers (named for its network) give way to its blockquote before Readability. */
  embeds?: boolean;
  /** A comment section goes before Readability, whatever its length. */
  comments?: boolean;
  /** Grids of teasers (blocks led by a heading that is all one link to another page of the site) go. */
  teasers?: boolean;
  /** A subheading loses its class before Readability, which drops an h2 whose class sounds like furniture. */
  headings?: boolean;
  /** A paragraph goes as a link list only past 80% link text, not 60%: a sentence around a link is text. */
  linkSentences?: boolean;
  /** Other stories beside the one the page's title names (a stream of articles) go before Readability. */
  stories?: boolean;
  /** A sign-up box (the short block around an email field) goes with its pitch. */
  signups?: boolean;
  /** A div around a single paragraph is replaced by the paragraph before Readability. */
  wrappedParagraphs?: boolean;
  /** A formula and its wrappers lose class and style: a renderer's names ("CtxtMenu") read as furniture, and a formula drawn as an image hides its MathML. */
  math?: boolean;
}

export const ALL_RULES: Required<CleanRules> = {
  articleEnd: true,
  uiLines: true,
  embeds: true,
  comments: true,
  teasers: true,
  headings: true,
  linkSentences: true,
  stories: true,
  signups: true,
  wrappedParagraphs: true,
  math: true,
};

/** The whole text of a block that is page furniture: an ad label, a control, a gallery counter, a stamp. */
const UI_LINE =
  /^(advert(isement)?|sponsored( content)?|sign in|log in|close|caption|print|share( this)?( article| story| page)?|image \d+ of \/? ?\d+|\d+ of \d+|this slideshow requires javascript\.?|(published|posted|updated|last updated|first published)\s*:?\s*((on|at)\s+)?(\d|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s|\w+ ago\b|an? \w+ ago\b).{0,60})$/i;

/** What a heading that ends the article says: what follows is other pages' teasers or a sign-up. */
const ARTICLE_END =
  /^(related(\s+(articles?|stories|posts?|content|coverage|reading|topics|news|links|videos))?|recommended(\s+(for you|stories|articles|reading|videos))?|more\s+(from|on|in|stories|articles|news|like this|to read|to explore)\b.*|read\s+(more|next|also)\b.*|you\s+(may|might)\s+(also\s+)?(like|enjoy|be interested in)\b.*|(most\s+)?(popular|read|viewed|shared)(\s+(now|stories|articles|today))?|trending(\s+now)?|top stories|also\s+(read|on|see)\b.*|what to read next|up next|next\s+(story|article|up)|sign up\b.*|subscribe\b.*|(our|get the|the)?\s*newsletters?\b.*|don'?t miss\b.*|latest\s+(news|stories|articles|posts)|(\d+\s+)?comments?(\s*\(\d+\))?|\d+\s+(responses?|replies|thoughts)\b.*|discussion|join the (conversation|discussion)|leave a (reply|comment)|(post|add|write) a comment|reader comments|have your say|get (our|the)\b.*\b(emails?|newsletters?|briefing))[\s:.!]*$/i;

/** Class or id words of a comment section (a list of readers' comments, a reply form). */
const COMMENTS =
  /(^|[-_\s])(comments|comment-?(list|section|area|thread|threads|wrap|wrapper|container|block|holder|stream|form)|commentlist|disqus(_thread)?|discussion|replies|respond|reader-?comments)([-_\s]|$)/i;

/**
 * An embedded post (a tweet, an Instagram caption) is a blockquote in wrappers of its own, named
 * for where it comes from ("social-media-embed"). Readability takes such a wrapper for a share bar,
 * or for a block of links (a post's text is half links and a date). The wrappers that hold nothing
 * but the quote are replaced by it: the quote is judged as the quoted text it is.
 */
function unwrapQuotes(quotes: Element[]): void {
  for (const q of quotes) {
    const len = textLen(q);
    if (len === 0) continue;
    let outer: Element | null = null;
    for (let n = q.parentElement, depth = 0; n && depth < 3; n = n.parentElement, depth++) {
      if (!/^(DIV|SECTION|FIGURE|SPAN)$/.test(n.tagName) || textLen(n) > len + 20) break;
      outer = n;
    }
    if (outer) outer.replaceWith(q);
  }
}

/** The same words as a whole heading, with no subject after them ("Read more", not "Read more on …"). */
const ARTICLE_END_PHRASE = new RegExp(ARTICLE_END.source.replaceAll('\\b.*', ''), 'i');

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
function keepTitledStory(headings: Element[], titles: string[]): void {
  const wanted = titles.map(words).filter((t) => t.length > 0);
  if (wanted.length === 0) return;
  const named = (text: string) => {
    const h = words(text);
    if (!h) return false;
    return wanted.some(
      (t) => t === h || (h.split(' ').length >= 3 && (t.startsWith(`${h} `) || t.endsWith(` ${h}`))),
    );
  };
  const heading = headings.find((h) => named(h.textContent ?? ''));
  if (!heading) return;
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

/** What precleanSource looks at, found in one walk over the elements (in document order). */
interface Survey {
  /** Elements with a class or an id. */
  named: Element[];
  headings: Element[];
  quotes: Element[];
  paragraphs: Element[];
  emails: Element[];
  /** schema.org Comment items. */
  comments: Element[];
  /** Links, buttons and spans that say "Reply" or the like (see REPLY). */
  controls: Element[];
  /** MathML formulas. */
  formulas: Element[];
}

function survey(doc: Document): Survey {
  const out: Survey = {
    named: [],
    headings: [],
    quotes: [],
    paragraphs: [],
    emails: [],
    comments: [],
    controls: [],
    formulas: [],
  };
  const root = doc.documentElement;
  let el: Element | null = root;
  while (el) {
    const name: string = el.localName;
    if (el.hasAttribute('class') || el.hasAttribute('id')) out.named.push(el);
    if (name === 'p') out.paragraphs.push(el);
    else if (name === 'h1' || name === 'h2' || name === 'h3') out.headings.push(el);
    else if (name === 'blockquote') out.quotes.push(el);
    else if (name === 'math') out.formulas.push(el);
    else if (name === 'input' && el.getAttribute('type')?.toLowerCase() === 'email') out.emails.push(el);
    else if (name === 'a' || name === 'button' || name === 'span') {
      const text = shortText(el, 40);
      if (text && REPLY.test(text.trim())) out.controls.push(el);
    }
    if (/schema\.org\/comment/i.test(el.getAttribute('itemtype') ?? '')) out.comments.push(el);
    // Next in document order (a template's content is not searched).
    const child: Element | null = name === 'template' ? null : el.firstElementChild;
    if (child) {
      el = child;
      continue;
    }
    while (el && el !== root && !el.nextElementSibling) el = el.parentElement;
    el = el && el !== root ? el.nextElementSibling : null;
  }
  return out;
}

/**
 * A formula is the article's text. A renderer wraps it in elements of its own (MathJax: a
 * container beside a drawn copy, named "MathJax CtxtMenu_Attached_0"), and Readability takes a
 * name with "menu" in it for furniture; or shows an image of it and hides the MathML with
 * `display: none` (MediaWiki). The formula and the wrappers that hold no other text lose their
 * class, style and `hidden`, so it is judged as text, not by how it is drawn. (The drawn copy,
 * `aria-hidden`, goes as always.)
 */
function unnameFormulas(formulas: Element[]): void {
  const plain = (el: Element) => {
    el.removeAttribute('class');
    el.removeAttribute('style');
    el.removeAttribute('hidden');
  };
  for (const math of formulas) {
    const len = textLen(math);
    plain(math);
    for (let el = math.parentElement; el && el.localName !== 'body'; el = el.parentElement) {
      if (textLen(el) > len) break;
      plain(el);
    }
  }
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

/** Before Readability: drop furniture by its class or id, so it never becomes a candidate. */
export function precleanSource(doc: Document, rules: CleanRules = ALL_RULES, titles: string[] = []): void {
  const found = survey(doc);
  if (rules.stories) keepTitledStory(found.headings, titles);
  if (rules.embeds) unwrapQuotes(found.quotes);
  if (rules.math) unnameFormulas(found.formulas);
  const heading = found.headings.find((h) => h.localName === 'h1' && h.isConnected);
  const keeps = (el: Element) => !(heading && el.contains(heading));
  for (const el of found.named) {
    if (el.tagName === 'BODY' || el.tagName === 'HTML' || el.tagName === 'ARTICLE' || el.tagName === 'MAIN')
      continue;
    const ci = classId(el);
    if (ci.length >= 200) continue;
    // A comment thread can be longer than the post it follows: judged by its name and by not
    // holding the page's heading, not by its length.
    if (rules.comments && COMMENTS.test(ci) && keeps(el)) {
      el.remove();
      continue;
    }
    // A subheading is the article's text whatever its class says (Readability drops an h2 whose
    // class sounds like furniture): it loses the class. Furniture's headings go with the furniture.
    if (rules.headings && HEADING.test(el.tagName)) {
      el.removeAttribute('class');
      continue;
    }
    if (FURNITURE.test(ci) && textLen(el) < 400) el.remove();
  }

  if (rules.wrappedParagraphs) {
    // A div around one paragraph and nothing else is the paragraph: Readability unwraps it only
    // when under a quarter of its text is links, and may drop it as a link block otherwise. The
    // paragraph takes the div's names when it has none, for what they say of it.
    for (const p of found.paragraphs) {
      const div = p.parentElement;
      if (div?.localName !== 'div' || div.firstElementChild !== p || div.lastElementChild !== p) continue;
      let alone = true;
      for (let c = div.firstChild; c && alone; c = c.nextSibling) {
        if (c.nodeType === 3 && (c as Text).data.trim()) alone = false;
      }
      if (!alone) continue;
      for (const name of ['class', 'id']) {
        const v = div.getAttribute(name);
        if (v && !p.hasAttribute(name)) p.setAttribute(name, v);
      }
      div.replaceWith(p);
    }
  }
  if (rules.signups) {
    // A sign-up box: the short block around an email field (Readability drops the field and
    // keeps the pitch).
    for (const input of found.emails) {
      let box: Element | null = null;
      for (let n = input.parentElement, depth = 0; n && depth < 5; n = n.parentElement, depth++) {
        if (/^(BODY|HTML|MAIN|ARTICLE)$/.test(n.tagName) || textLen(n) >= 400 || !keeps(n)) break;
        box = n;
      }
      box?.remove();
    }
  }
  if (rules.comments) {
    for (const el of [...found.comments, ...threads(found.controls)])
      if (el.parentNode && keeps(el)) el.remove();
  }
}

/**
 * What a control under a reader's comment says. Only a reply: "Report" or "Flag" also label an
 * article's own links ("report an error"), and two of those far apart would meet at a block
 * that holds the article.
 */
const REPLY = /^(reply|respond|antworten|répondre|responder|rispondi|antwoorden|svara|odpowiedz)$/i;

/**
 * Comment threads by their shape, whatever their names: a block whose children hold, one by one,
 * a "Reply" control each, and are a comment's length (under 3,000 characters).
 * Two controls in a row meet at the thread: their nearest common ancestor.
 */
function threads(controls: Element[]): Element[] {
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
  const found: Element[] = [];
  for (const [meet, items] of meets) {
    if (items.size >= 2 && [...items].every((item) => textLen(item) < 3000)) found.push(meet);
  }
  return found;
}

function commonAncestor(a: Element, b: Element): Element | null {
  const up = new Set<Element>();
  for (let n = a.parentElement; n; n = n.parentElement) up.add(n);
  for (let n = b.parentElement; n; n = n.parentElement) if (up.has(n)) return n;
  return null;
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

/** Whether el still hangs under root (the article may be a detached tree, so isConnected cannot tell). */
function under(el: Element, root: Element): boolean {
  for (let n: Node | null = el; n; n = n.parentNode) if (n === root) return true;
  return false;
}

/** After Readability: drop captions, link lists and other short furniture from the chosen block. */
export function cleanArticle(body: Element, rules: CleanRules = ALL_RULES, pageUrl?: string): void {
  if (rules.articleEnd) cutAtArticleEnd(body);
  for (const el of Array.from(body.querySelectorAll<Element>(REMOVE_ALWAYS))) el.remove();
  // Every element's text and link-text length in one walk: measuring each element anew would read
  // its subtree once per ancestor. The decisions below remove subtrees only after their
  // ancestors were judged, so these lengths are the ones each check would have read.
  const lens = measure(body);
  if (rules.teasers && pageUrl) removeTeasers(body, lens, pageUrl);
  const BLOCK = /^(UL|OL|DIV|SECTION|P|TABLE)$/;
  const LINE = /^(P|DIV|SPAN|LI|H2|H3|H4|H5|H6)$/;
  for (const el of Array.from(
    body.querySelectorAll<Element>('ul,ol,div,section,p,table,span,li,h2,h3,h4,h5,h6'),
  )) {
    if (!under(el, body)) continue; // inside something removed already
    const m = lens.get(el);
    if (!m || m.text === 0) continue;
    // Mostly links: a menu, "related stories" or a tag list.
    const most = rules.linkSentences && el.tagName === 'P' ? 0.8 : 0.6;
    if (BLOCK.test(el.tagName) && m.link / m.text > most && m.text < 1000) {
      el.remove();
      continue;
    }
    // A line that is only an ad label, a control or a stamp (a block of blocks is judged by them).
    if (rules.uiLines && LINE.test(el.tagName) && m.text <= 80 && !m.blocks) {
      if (UI_LINE.test((el.textContent ?? '').replace(/\s+/g, ' ').trim())) el.remove();
    }
  }
}

const HEADING = /^H[2-6]$/;

/** Whether `href` leads to another page of the site of `page` (the same host, "www." aside). */
function otherPageOfSite(href: string, page: URL): boolean {
  let u: URL;
  try {
    u = new URL(href, page);
  } catch {
    return false;
  }
  const host = (h: string) => h.replace(/^www\./, '');
  return host(u.host) === host(page.host) && (u.pathname !== page.pathname || u.search !== page.search);
}

/**
 * Teasers of this site's other pages: blocks under 500 characters led by a heading that is all one
 * link to another page of this site. A block whose children are mostly two or more of them is a
 * "more stories" grid, wherever it sits and whatever its class: it goes. An article's own
 * subheadings are not links, or link to themselves; a list of products links to the shops.
 */
function removeTeasers(body: Element, lens: Map<Element, Lengths>, pageUrl: string): void {
  let page: URL;
  try {
    page = new URL(pageUrl);
  } catch {
    return;
  }
  // The headings that are all one link to another page of the site; then the blocks they lead.
  const items = new Map<Element, Set<Element>>();
  for (const [h, hm] of lens) {
    if (!HEADING.test(h.tagName) || hm.text === 0 || hm.link !== hm.text) continue;
    const href = (h.closest('a') ?? h.querySelector('a'))?.getAttribute('href');
    if (!href || !otherPageOfSite(href, page)) continue;
    // Each block under 500 characters that it leads (it is the block's first heading) is a teaser
    // in the block's parent.
    for (let x: Element = h; x.parentElement && x.parentElement !== body; x = x.parentElement) {
      if (lens.get(x)!.text >= 500) break;
      if (x !== h && x.querySelector('h2,h3,h4,h5,h6') !== h) break;
      const parent = x.parentElement;
      let set = items.get(parent);
      if (!set) items.set(parent, (set = new Set()));
      set.add(x);
    }
  }
  for (const [el, teasers] of items) {
    if (teasers.size < 2 || !/^(DIV|SECTION|UL|OL)$/.test(el.tagName) || !under(el, body)) continue;
    let chars = 0;
    for (const t of teasers) chars += lens.get(t)!.text;
    if (chars >= 0.6 * lens.get(el)!.text) el.remove();
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
