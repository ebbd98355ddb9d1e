/**
 * The cleaning that runs on the block Readability chose: the article cut at its end, and captions
 * (marked or beside an image), link lists, teaser grids and one-line furniture (ad labels, controls, stamps) removed.
 */
import { cutAtArticleEnd } from './article-end';
import { ALL_RULES, type CleanRules, type RuleName } from './rules';
import { classId, measure, replaceWithNodes, under, type Lengths } from './dom-measure';
import { removeTeasers } from './teasers';
import {
  APPEAL,
  APPEAL_FIRST,
  APPEAL_OTHER,
  APPEAL_WHAT,
  CREDIT,
  INLINE_IMAGE,
  SEE_ALSO,
  UI_LINE,
  UI_LINE_OTHER,
} from './vocabulary';

const REMOVE_ALWAYS =
  'script,style,noscript,template,iframe,form,button,figcaption,nav,aside,footer,[role="navigation"],[aria-hidden="true"]';

const SEE_ALSO_TAGS = /^(P|DIV|LI|BLOCKQUOTE)$/;
/** A line that ends as a sentence does. */
const SENTENCE_ENDS = /[.!…]["'»”’)]*$/;

/** An appeal's length at most: a sentence or two ("Follow us on … Send us a message on …"). */
const APPEAL_CHARS = 300;

/** What the steps after Readability share. */
interface Post {
  readonly body: Element;
  readonly rules: CleanRules;
  readonly pageUrl?: string;
  /** Every element's text and link-text length (see measure). */
  lens: Map<Element, Lengths>;
  /** The block is a run of items (rule itemRuns): its link lists and teasers are its content. */
  readonly items: boolean;
}

/** The steps after Readability, in order; a step without a rule always runs. */
const ARTICLE_STEPS: readonly { rule?: RuleName; run(p: Post): void }[] = [
  { rule: 'articleEnd', run: (p) => cutAtArticleEnd(p.body) },
  { rule: 'textForms', run: (p) => unwrapTextForms(p.body) },
  { run: (p) => Array.from(p.body.querySelectorAll<Element>(REMOVE_ALWAYS)).forEach((el) => el.remove()) },
  // Every element's text and link-text length in one walk: measuring each element anew would read
  // its subtree once per ancestor. The decisions below remove subtrees only after their
  // ancestors were judged, so these lengths are the ones each check would have read.
  { run: (p) => void (p.lens = measure(p.body)) },
  { rule: 'teasers', run: (p) => !p.items && p.pageUrl && removeTeasers(p.body, p.lens, p.pageUrl) },
  { rule: 'imageCaptions', run: (p) => dropImageCaptions(p.body, p.lens) },
  { run: judgeLines },
];

/**
 * After Readability: drop captions, link lists and other short furniture from the chosen block
 * (from a run of `items`, captions and furniture only).
 */
export function cleanArticle(
  body: Element,
  rules: CleanRules = ALL_RULES,
  pageUrl?: string,
  items = false,
): void {
  const p: Post = { body, rules, pageUrl, lens: new Map(), items };
  for (const step of ARTICLE_STEPS) if (step.rule === undefined || rules[step.rule]) step.run(p);
}

const BLOCK = /^(UL|OL|DIV|SECTION|P|TABLE)$/;
const LINE = /^(P|DIV|SPAN|LI|H2|H3|H4|H5|H6)$/;

/** A block or a line that goes as furniture: the first of these that holds for it removes it. */
const LINE_RULES: readonly {
  rule?: RuleName;
  /** The rule finds link lists: a run of items keeps them. */
  links?: true;
  holds(el: Element, m: Lengths, rules: CleanRules): boolean;
}[] = [
  // Mostly links: a menu, "related stories" or a tag list (a paragraph past 80% with rule linkSentences).
  {
    links: true,
    holds: (el, m, rules) =>
      BLOCK.test(el.tagName) &&
      m.link / m.text > (rules.linkSentences && el.tagName === 'P' ? 0.8 : 0.6) &&
      m.text < 1000,
  },
  // A line that is only an ad label, a control or a stamp (a block of blocks is judged by them).
  {
    rule: 'uiLines',
    holds: (el, m) => {
      if (!LINE.test(el.tagName) || m.text > 80 || m.blocks) return false;
      const line = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      return UI_LINE.test(line) || UI_LINE_OTHER.test(line) || CREDIT.test(line);
    },
  },
  // "Read also: <another story>" set in the text, in any of several languages: mostly a link, or
  // a headline (no full stop at its end) when the link is elsewhere. A sentence stays.
  {
    rule: 'uiLines',
    holds: (el, m) => {
      if (!SEE_ALSO_TAGS.test(el.tagName) || m.text > 200 || m.blocks) return false;
      const line = (el.textContent ?? '').trim();
      return SEE_ALSO.test(line) && (m.link * 2 >= m.text || !SENTENCE_ENDS.test(line));
    },
  },
  // A call to subscribe, download the app or follow the site elsewhere.
  {
    rule: 'uiLines',
    holds: (el, m) => {
      if (!LINE.test(el.tagName) || m.text > APPEAL_CHARS || m.blocks) return false;
      // Its first word first: reading the text of every line of an article costs a tenth of its cleaning.
      if (!APPEAL_FIRST.test(firstText(el))) return false;
      const line = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      return (APPEAL.test(line) && APPEAL_WHAT.test(line)) || APPEAL_OTHER.test(line);
    },
  },
];

/** Each block and line of the article judged by LINE_RULES, outermost first. */
function judgeLines(p: Post): void {
  const rules = LINE_RULES.filter((r) => (r.rule === undefined || p.rules[r.rule]) && !(r.links && p.items));
  for (const el of Array.from(
    p.body.querySelectorAll<Element>('ul,ol,div,section,p,table,span,li,h2,h3,h4,h5,h6,blockquote'),
  )) {
    if (!under(el, p.body)) continue; // inside something removed already
    const m = p.lens.get(el);
    if (!m || m.text === 0) continue;
    if (rules.some((r) => r.holds(el, m, p.rules))) el.remove();
  }
}

/** The first text under `el` that is not white space ('' when none). */
function firstText(el: Element): string {
  for (let n: Node | null = el.firstChild; n && n !== el;) {
    if (n.nodeType === 3 && (n as Text).data.trim()) return (n as Text).data;
    if (n.firstChild) n = n.firstChild;
    else {
      while (n && n !== el && !n.nextSibling) n = n.parentNode;
      n = n && n !== el ? n.nextSibling : null;
    }
  }
  return '';
}

/** The most text an image's own block holds for it to be the image's caption. */
const CAPTION_CHARS = 150;

/** An image narrower or shorter than this (by its attributes) sits in a line of text. */
const INLINE_PX = 100;

/**
 * An image's own block (its nearest p or div, holding no p, div or li) with 150 characters of text
 * or less keeps its images and loses the text: a caption or a credit not marked as one.
 */
function dropImageCaptions(body: Element, lens: Map<Element, Lengths>): void {
  for (const img of Array.from(body.querySelectorAll<Element>('img'))) {
    if (INLINE_IMAGE.test(classId(img)) || smallerThan(img, INLINE_PX)) continue;
    const block = img.parentElement?.closest('p,div');
    if (!block || block === body || !under(block, body)) continue;
    const m = lens.get(block);
    if (!m || m.text === 0 || m.blocks || m.text > CAPTION_CHARS) continue;
    block.replaceChildren(...Array.from(block.querySelectorAll('img')));
    m.text = 0; // judged once: its other images pass it by
  }
}

function smallerThan(img: Element, px: number): boolean {
  return ['width', 'height'].some((a) => {
    const v = Number.parseInt(img.getAttribute(a) ?? '', 10);
    return Number.isFinite(v) && v < px;
  });
}

/** A form with at least this many characters of text besides its controls holds content. */
const FORM_TEXT = 200;
const CONTROLS = 'input,select,textarea,button,option,label';

/** Each form holding text gives way to its content, its controls removed (see CleanRules.textForms). */
function unwrapTextForms(body: Element): void {
  for (const form of Array.from(body.querySelectorAll<Element>('form')).reverse()) {
    const controls = Array.from(form.querySelectorAll<Element>(CONTROLS));
    const controlText = controls.reduce((n, c) => n + (c.textContent ?? '').length, 0);
    const text = (form.textContent ?? '').replace(/\s+/g, ' ').length - controlText;
    if (text < FORM_TEXT) continue;
    for (const c of controls) c.remove();
    replaceWithNodes(form);
  }
}
