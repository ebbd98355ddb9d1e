/**
 * The cleaning that runs on the page before Readability: furniture dropped by its class or id, so
 * it never becomes a candidate, and blocks Readability misjudges (embedded posts, formulas,
 * paragraphs in a div of their own, sign-up boxes, comment threads) put right or removed.
 */
import { ALL_RULES, type CleanRules } from './clean';
import { COMMENTS, isReplyControl, threads } from './comments';
import { classId, HEADING, textLen } from './dom-measure';
import { keepHeadingPath } from './heading-path';
import { breakParagraphs } from './line-paragraphs';
import { isTemplateScript, unwrapScriptText } from './script-text';
import { COMMENT_NAMED, isThreadPage, unnameComments } from './thread-page';
import { keepTitledStory, titledHeading } from './titled-story';

// Class or id words that mark page furniture rather than article text.
const FURNITURE =
  /(^|[-_\s])(caption|credit|byline|related|share|sharing|social|newsletter|promo|subscribe|subscription|advert|ads?|breadcrumbs?|tags?|author-bio|bio|timestamp|dateline|comments?|recommend(ed|ations)?|more-stories|read-more|also-like|outbrain|taboola|sidebar|signup|inline-cta|cta|disclaimer|copyright|meta|published|updated)([-_\s]|$)/i;

/**
 * A class that hides its element until a script shows it (a notice, a popup, a banner): the whole
 * word, so a class hiding it on one screen size only (`hidden-xs`, `md:hidden`) does not count.
 */
const HIDDEN = /(^|\s)(!?hidden|d-none|is-hidden|hide|display-none)(\s|$)/i;

/**
 * A dialog's name: a modal, a popup or a lightbox, shown over the page when asked for (a login's
 * panels and messages). Links and buttons named so open one; a dialog's role Readability knows.
 */
const DIALOG = /(^|[-_\s])(modal|modals|dialog|popup|lightbox)([-_\s]|$)/i;
const DIALOG_TAGS = /^(DIV|SECTION|ARTICLE|ASIDE|DIALOG)$/;

/** A notice's length at most: a longer hidden block may be a section a reader opens. */
const NOTICE_CHARS = 1000;

function hiddenByClass(el: Element): boolean {
  return HIDDEN.test(el.getAttribute('class') ?? '');
}

/**
 * Class words with "hidden" in them that do not hide their element on a desktop screen: a part of
 * it is hidden (its label), or its overflow, or it is hidden on small screens or in print only, or
 * until it has loaded.
 */
const HIDDEN_PART =
  /^(?:.*label[-_]*hidden|hidden[-_]*label.*|.*overflow(?:-[xy])?-hidden|.*lazy[-_]?hidden|(?:.*[-_])?hidden[-_]+(?:xs|sm|md|s|small|medium|phone|mobile|tablet|palm|print)(?:[-_]?(?:down|only))?)$/i;

/** Drops the class words HIDDEN_PART names (Readability weighs "hidden" anywhere against an element). */
function unhideParts(el: Element): void {
  const cls = el.getAttribute('class');
  if (!cls || !/hidden/i.test(cls)) return;
  const words = cls.split(/\s+/);
  const kept = words.filter((w) => !HIDDEN_PART.test(w));
  if (kept.length < words.length) el.setAttribute('class', kept.join(' '));
}

/** What precleanSource looks at, found in one walk over the elements (in document order). */
interface Survey {
  /** Elements with a class or an id. */
  named: Element[];
  headings: Element[];
  quotes: Element[];
  paragraphs: Element[];
  /** Line breaks. */
  breaks: Element[];
  emails: Element[];
  /** schema.org Comment items. */
  comments: Element[];
  /** Links, buttons and spans that say "Reply" or the like (see isReplyControl). */
  controls: Element[];
  /** MathML formulas. */
  formulas: Element[];
  /** `<noscript>` elements and scripts holding html templates. */
  scripts: Element[];
}

function survey(doc: Document): Survey {
  const out: Survey = {
    named: [],
    headings: [],
    quotes: [],
    paragraphs: [],
    breaks: [],
    emails: [],
    comments: [],
    controls: [],
    formulas: [],
    scripts: [],
  };
  const root = doc.documentElement;
  let el: Element | null = root;
  while (el) {
    const name: string = el.localName;
    if (el.hasAttribute('class') || el.hasAttribute('id')) out.named.push(el);
    if (name === 'p') out.paragraphs.push(el);
    else if (name === 'br') out.breaks.push(el);
    else if (name === 'h1' || name === 'h2' || name === 'h3') out.headings.push(el);
    else if (name === 'blockquote') out.quotes.push(el);
    else if (name === 'math') out.formulas.push(el);
    else if (name === 'noscript' || (name === 'script' && isTemplateScript(el))) out.scripts.push(el);
    else if (name === 'input' && el.getAttribute('type')?.toLowerCase() === 'email') out.emails.push(el);
    else if (name === 'a' || name === 'button' || name === 'span') {
      if (isReplyControl(el)) out.controls.push(el);
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

/**
 * A div around one paragraph and nothing else is the paragraph: Readability unwraps it only when
 * under a quarter of its text is links, and may drop it as a link block otherwise. The paragraph
 * takes the div's names when it has none, for what they say of it.
 */
function unwrapParagraphs(paragraphs: Element[]): void {
  for (const p of paragraphs) {
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

/**
 * A sign-up box: the short block around an email field (Readability drops the field and keeps the
 * pitch). `keeps` says whether a block may go (not when it holds the page's heading).
 */
function removeSignups(emails: Element[], keeps: (el: Element) => boolean): void {
  for (const input of emails) {
    let box: Element | null = null;
    for (let n = input.parentElement, depth = 0; n && depth < 5; n = n.parentElement, depth++) {
      if (/^(BODY|HTML|MAIN|ARTICLE)$/.test(n.tagName) || textLen(n) >= 400 || !keeps(n)) break;
      box = n;
    }
    box?.remove();
  }
}

/**
 * Before Readability: drop furniture by its class or id, so it never becomes a candidate. Gives
 * back the page's heading (the one its title names, else its first h1) when there is one.
 */
export function precleanSource(
  doc: Document,
  rules: CleanRules = ALL_RULES,
  titles: string[] = [],
): Element | undefined {
  let found = survey(doc);
  const titled = titledHeading(found.headings, titles);
  // An article held in a template or a <noscript> is put in the page, and the page surveyed again.
  if (rules.scriptText && unwrapScriptText(found.scripts, titled)) found = survey(doc);
  if (rules.stories) keepTitledStory(found.headings, titled);
  if (rules.headingPath) keepHeadingPath(titled ?? found.headings.find((h) => h.localName === 'h1'));
  if (rules.embeds) unwrapQuotes(found.quotes);
  if (rules.math) unnameFormulas(found.formulas);
  const heading = found.headings.find((h) => h.localName === 'h1' && h.isConnected);
  const keeps = (el: Element) => !(heading && el.contains(heading));
  // A page of posts: its comments are its content (see thread-page.ts).
  const shaped = rules.comments ? threads(found.controls) : [];
  const thread =
    rules.threads &&
    isThreadPage(
      titled,
      found.named.filter((el) => COMMENT_NAMED.test(classId(el))),
      shaped.flatMap((t) => t.items),
      found.comments,
    );
  if (thread) unnameComments(found.named);
  const removeComments = rules.comments && !thread;
  for (const el of found.named) {
    if (rules.hiddenParts) unhideParts(el);
    if (el.tagName === 'BODY' || el.tagName === 'HTML' || el.tagName === 'ARTICLE' || el.tagName === 'MAIN')
      continue;
    const ci = classId(el);
    if (ci.length >= 200) continue;
    // A comment thread can be longer than the post it follows: judged by its name and by not
    // holding the page's heading, not by its length.
    if (removeComments && COMMENTS.test(ci) && keeps(el)) {
      el.remove();
      continue;
    }
    // A subheading is the article's text whatever its class says (Readability drops an h2 whose
    // class sounds like furniture): it loses the class. Furniture's headings go with the furniture.
    if (rules.headings && HEADING.test(el.tagName)) {
      el.removeAttribute('class');
      continue;
    }
    if (rules.dialogs && DIALOG_TAGS.test(el.tagName) && DIALOG.test(ci) && keeps(el)) {
      el.remove();
      continue;
    }
    if (FURNITURE.test(ci) && textLen(el) < 400) el.remove();
    else if (rules.hiddenNotices && hiddenByClass(el) && keeps(el) && textLen(el) < NOTICE_CHARS) el.remove();
  }

  if (rules.wrappedParagraphs) unwrapParagraphs(found.paragraphs);
  if (rules.lineParagraphs) breakParagraphs(found.breaks);
  if (rules.signups) removeSignups(found.emails, keeps);
  if (removeComments) {
    for (const el of [...found.comments, ...shaped.map((t) => t.thread)])
      if (el.parentNode && keeps(el)) el.remove();
  }
  return titled ?? (heading?.isConnected ? heading : undefined);
}
