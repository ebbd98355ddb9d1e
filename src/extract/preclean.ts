/**
 * The cleaning that runs on the page before Readability: furniture dropped by its class or id, so
 * it never becomes a candidate, and blocks Readability misjudges (embedded posts, formulas,
 * paragraphs in a div of their own, sign-up boxes, comment threads) put right or removed.
 */
import { ALL_RULES, type CleanRules, type RuleName } from './rules';
import { threads } from './comments';
import { classId, HEADING, textLen } from './dom-measure';
import { keepFrames, keepHeadingPath } from './heading-path';
import { breakParagraphs } from './line-paragraphs';
import { unwrapScriptText, unwrapShellNoscript } from './script-text';
import type { Json } from './json-ld';
import { FURNITURE_CHARS, furnitureRuns } from './furniture-runs';
import { survey, type Survey } from './survey';
import { isThreadPage, leadsReplies, statesThread, unnameComments } from './thread-page';
import { keepTitledStory, titledHeading } from './titled-story';
import { COMMENT_NAMED, COMMENTS, DIALOG, FURNITURE, HIDDEN, HIDDEN_PART, REVIEWS } from './vocabulary';

const DIALOG_TAGS = /^(DIV|SECTION|ARTICLE|ASIDE|DIALOG)$/;

/** A notice's length at most: a longer hidden block may be a section a reader opens. */
const NOTICE_CHARS = 1000;

function hiddenByClass(el: Element): boolean {
  return HIDDEN.test(el.getAttribute('class') ?? '');
}

/** Drops the class words HIDDEN_PART names (Readability weighs "hidden" anywhere against an element). */
function unhideParts(el: Element): void {
  const cls = el.getAttribute('class');
  if (!cls || !/hidden/i.test(cls)) return;
  const words = cls.split(/\s+/);
  const kept = words.filter((w) => !HIDDEN_PART.test(w));
  if (kept.length < words.length) el.setAttribute('class', kept.join(' '));
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

/** What the steps before Readability share. */
interface Pre {
  readonly doc: Document;
  /** The page's JSON-LD objects (see jsonLd). */
  readonly ld: Json[];
  readonly rules: CleanRules;
  found: Survey;
  /** The heading the page's title names. */
  titled?: Element;
  /** The page's first h1 still in it. */
  heading?: Element;
  /** Comment sections found by their shape (when rule comments is on). */
  shaped: { thread: Element; items: Element[] }[];
  /** A page of posts: its comments are its content (see thread-page.ts). */
  thread: boolean;
  /** The page states it is a product and not an article (rule reviews). */
  product: boolean;
  /** Named as furniture, but parts of a page's items (see furniture-runs.ts). */
  spared: Set<Element>;
  /**
   * The text lengths furnitureRuns measured, before judgeNamed removes anything: an element is
   * judged before any element it holds, so its length is still the one measured.
   */
  lens: Map<Element, number>;
}

/** Whether `el` may go: not when it holds the page's heading. */
function keeps(p: Pre, el: Element): boolean {
  return !(p.heading && el.contains(p.heading));
}

interface Step {
  /** Its switch (see rules.ts); a step without one always runs. */
  rule?: RuleName;
  run(p: Pre): void;
}

/** The steps before Readability, in order. */
const PAGE_STEPS: readonly Step[] = [
  // An article held in a template or a <noscript> is put in the page, and the page surveyed again.
  {
    rule: 'scriptText',
    run: (p) => {
      if (unwrapShellNoscript(p.found.scripts, p.doc.body) || unwrapScriptText(p.found.scripts, p.titled))
        p.found = survey(p.doc);
    },
  },
  { rule: 'stories', run: (p) => keepTitledStory(p.found.headings, p.titled) },
  {
    rule: 'headingPath',
    run: (p) => keepHeadingPath(p.titled ?? p.found.headings.find((h) => h.localName === 'h1')),
  },
  { rule: 'frames', run: (p) => keepFrames(p.found.named, p.doc.body) },
  { rule: 'embeds', run: (p) => unwrapQuotes(p.found.quotes) },
  { rule: 'math', run: (p) => unnameFormulas(p.found.formulas) },
  {
    run: (p) => {
      p.heading = p.found.headings.find((h) => h.localName === 'h1' && h.isConnected);
      p.shaped = p.rules.comments ? threads(p.found.controls) : [];
    },
  },
  {
    rule: 'threads',
    run: (p) => {
      const named = p.found.named.filter((el) => COMMENT_NAMED.test(classId(el)));
      p.thread =
        isThreadPage(
          p.titled,
          named,
          p.shaped.flatMap((t) => t.items),
          p.found.comments,
        ) ||
        leadsReplies(p.titled ?? p.heading, p.found.comments) ||
        statesThread(p.doc, p.titled ?? p.heading, p.ld);
      if (p.thread) unnameComments(p.found.named);
    },
  },
  { rule: 'hiddenParts', run: (p) => p.found.named.forEach(unhideParts) },
  { run: judgeNamed },
  { rule: 'wrappedParagraphs', run: (p) => unwrapParagraphs(p.found.paragraphs) },
  { rule: 'lineParagraphs', run: (p) => breakParagraphs(p.found.breaks) },
  { rule: 'signups', run: (p) => removeSignups(p.found.emails, (el) => keeps(p, el)) },
  {
    rule: 'comments',
    run: (p) => {
      if (p.thread) return;
      for (const el of [...p.found.comments, ...p.shaped.map((t) => t.thread)])
        if (el.parentNode && keeps(p, el)) el.remove();
    },
  },
];

/** What becomes of an element by its class or id: the first of these that holds for it. */
interface NamedRule {
  rule?: RuleName;
  holds(el: Element, classId: string, p: Pre): boolean;
  /** Removed, unless this says otherwise. */
  then?: (el: Element) => void;
}

const NAMED_RULES: readonly NamedRule[] = [
  // A comment thread can be longer than the post it follows: judged by its name and by not
  // holding the page's heading, not by its length.
  { rule: 'comments', holds: (el, ci, p) => !p.thread && COMMENTS.test(ci) && keeps(p, el) },
  // A subheading is the article's text whatever its class says (Readability drops an h2 whose
  // class sounds like furniture): it loses the class. Furniture's headings go with the furniture.
  { rule: 'headings', holds: (el) => HEADING.test(el.tagName), then: (el) => el.removeAttribute('class') },
  { rule: 'reviews', holds: (el, ci, p) => p.product && REVIEWS.test(ci) && keeps(p, el) },
  { rule: 'dialogs', holds: (el, ci, p) => DIALOG_TAGS.test(el.tagName) && DIALOG.test(ci) && keeps(p, el) },
  {
    holds: (el, ci, p) =>
      FURNITURE.test(ci) && (p.lens.get(el) ?? textLen(el)) < FURNITURE_CHARS && !p.spared.has(el),
  },
  {
    rule: 'hiddenNotices',
    holds: (el, _, p) => hiddenByClass(el) && keeps(p, el) && textLen(el) < NOTICE_CHARS,
  },
];

/** Elements never judged by their names. */
const NEVER_JUDGED = /^(BODY|HTML|ARTICLE|MAIN)$/;

/** Furniture dropped by its class or id, so it never becomes a candidate (see NAMED_RULES). */
function judgeNamed(p: Pre): void {
  if (p.rules.furnitureRuns) p.spared = furnitureRuns(p.found.named, p.doc.body, NEVER_JUDGED, p.lens);
  const rules = NAMED_RULES.filter((r) => r.rule === undefined || p.rules[r.rule]);
  for (const el of p.found.named) {
    if (NEVER_JUDGED.test(el.tagName)) continue;
    const ci = classId(el);
    if (ci.length >= 200) continue;
    const rule = rules.find((r) => r.holds(el, ci, p));
    if (rule) (rule.then ?? removeElement)(el);
  }
}

function removeElement(el: Element): void {
  el.remove();
}

/**
 * Before Readability: the steps of PAGE_STEPS whose rules are on. Gives back the page's heading
 * (the one its title names, else its first h1) when there is one.
 */
export function precleanSource(
  doc: Document,
  rules: CleanRules = ALL_RULES,
  titles: string[] = [],
  ld: Json[] = [],
  /** The page states it is a product (see statesProduct): its reviews go (rule reviews). */
  product = false,
): Element | undefined {
  const found = survey(doc);
  const p: Pre = {
    doc,
    rules,
    ld,
    found,
    titled: titledHeading(found.headings, titles),
    shaped: [],
    thread: false,
    product: !!rules.reviews && product,
    spared: new Set(),
    lens: new Map(),
  };
  for (const step of PAGE_STEPS) if (step.rule === undefined || rules[step.rule]) step.run(p);
  return p.titled ?? (p.heading?.isConnected ? p.heading : undefined);
}
