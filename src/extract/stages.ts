/**
 * The steps of an html page's extraction (STAGES), each a function over the page's Work: parsed,
 * read, cut to the caller's selectors, cleaned around Readability by the rules of rules.ts, the
 * article chosen and completed. Writing the formats follows them (extract.ts).
 */
import { Readability } from '@mozilla/readability';
import { cleanArticle } from './clean-article';
import type { CleanRules } from './rules';
import { elementsWithTags } from './element-tree';
import type { ExtractOptions } from './extraction';
import { htmlText, tidy } from './html-text';
import { type Link, linksOf } from './links';
import { pageMetadata, type Metadata } from './metadata';
import { jsonLd, type Json } from './json-ld';
import { readHead, type Head } from './page-head';
import { parse, parseWithinDepth, type Parsed } from './parse';
import { precleanSource } from './preclean';
import { unwrapPage, withoutSiteName } from './headings';
import { isProduct, pageStandingIn, wholePage } from './whole-page';
import { leadOf, withLead } from './lead';
import { paragraphsAfter, withOpening } from './opening';
import { isListCell } from './list-cells';
import type { SelectorRun } from './selector-run';
import { statedIsFuller, statedParagraphs } from './stated-body';
import { mayStatePosts, postsAreFuller, statedPosts } from './stated-posts';
import { besideArticle, itemRun, runStandingIn, statesArticle, wordsToStandIn } from './item-runs';
import { isCorner, mainOf, mainWords, wordsForMain } from './main-block';
import { withStatedRecipe } from './stated-recipe';
import { withoutRepeats } from './repeats';
import { stateParagraphs } from './script-state';
import { tuneReadability } from '../tuning/readability';
import { VERDICT_READ_CHARS, wordCount } from './verdict';

type Article = ReturnType<Readability<Element>['parse']>;

/** One page's extraction as the stages leave it: each reads what earlier ones set. */
export interface Work {
  readonly page: string;
  readonly baseUrl: string;
  readonly opts: ExtractOptions;
  readonly rules: CleanRules;
  /** The caller's selectors share one deadline on this page (selector_too_costly past it). */
  readonly selectors: SelectorRun;
  /** The html that was parsed (the page, or the page within MAX_DEPTH). */
  html: string;
  /** The parsed page: read first, then changed by the cleaning and by Readability. */
  source: Parsed;
  head: Head;
  ld: Json[];
  metadata: Metadata;
  /** The page says it is an article (see statesArticle): a run or `<main>` needs more to stand in. */
  statesArticle: boolean;
  /** The whole page's links, and whether some were left out or cut. */
  links?: { links: Link[]; truncated: boolean };
  /** The document's own title, and whether it may end in the site's name. */
  docTitle: string;
  siteNamed: boolean;
  /** Read beside the page's heading before Readability moved it (rules lead and opening). */
  lead?: string;
  /** The text of the page's heading (the one its title names, else its first h1). */
  heading?: string;
  opening?: Element[];
  articleOpening?: Element[]; // the paragraphs after a heading in an <article> (rule itemRuns)
  /** The words of the block of the page's largest run of like items, before Readability (rule itemRuns). */
  runWords?: number;
  /** The words of the page's one `<main>`, before Readability (rule mainBlock). */
  mainWords?: number;
  spare?: Element; // the body as Readability first read it, for wholePage
  /** The cleaning before Readability threw: Readability is not asked. */
  broken?: boolean;
  article: Article;
  title: string;
  /** The content, once chosen (takeIncluded or chooseArticle); standIn may replace it, complete adds to it. */
  root?: HTMLElement;
  pageText?: string;
  /** The caller's selectors chose the content: no stage judges it. */
  picked?: boolean;
}

type Stage = (w: Work) => void;

/** The page parsed once: the metadata is read from it first, then Readability changes it. */
const parsePage: Stage = (w) => {
  ({ html: w.html, source: w.source } = parseWithinDepth(w.page, w.baseUrl));
};

/** Its head, JSON-LD and metadata, and (when asked) every link on it, before anything is removed. */
const readPage: Stage = (w) => {
  w.head = readHead(w.source as unknown as Document);
  w.ld = jsonLd(w.head.ldScripts);
  w.metadata = pageMetadata(w.source as unknown as Document, w.head, w.baseUrl, w.ld);
  w.statesArticle = statesArticle(w.head.meta.get('og:type'), w.ld);
  if (w.opts.links) w.links = linksOf(w.source.documentElement as unknown as HTMLElement, w.baseUrl);
};

/** What the caller's `exclude` selectors match goes first. */
const dropExcluded: Stage = (w) => {
  if (!w.opts.exclude?.length) return;
  for (const el of w.selectors.all(w.source as unknown as Document, w.opts.exclude)) el.remove();
};

/**
 * The caller knows where the content is (`include`): what the selectors match in the body,
 * outermost only. In document order an element inside an earlier match is inside the last one kept.
 */
const takeIncluded: Stage = (w) => {
  if (!w.opts.include?.length) return;
  const { source } = w;
  w.title = tidy(w.head.title || (source.title ?? ''));
  const body = source.body as Element | null;
  const picked: Element[] = [];
  for (const el of w.selectors.all(source as unknown as Document, w.opts.include)) {
    if (!body || !(el === body || body.contains(el))) continue;
    if (picked.length === 0 || !picked[picked.length - 1].contains(el)) picked.push(el);
  }
  w.pageText = body
    ? htmlText(body as unknown as Parameters<typeof htmlText>[0]).slice(0, VERDICT_READ_CHARS)
    : '';
  const root = source.createElement('div');
  for (const el of picked) root.appendChild(el);
  w.root = root as unknown as HTMLElement;
  w.picked = true;
};

/** The rules of stage 'preclean' (preclean.ts), and what lies beside the page's heading. */
const precleanPage: Stage = (w) => {
  w.docTitle = (w.source.title ?? '').trim();
  // A document title with a dash that no metadata repeats may end in the site's name.
  w.siteNamed = /\s[–—]\s/.test(w.docTitle) && !w.head.contents.has(w.docTitle);
  try {
    const titles = [w.head.title, w.docTitle];
    const heading = precleanSource(w.source as unknown as Document, w.rules, titles, w.ld, isProduct(w));
    w.heading = tidy(heading?.textContent ?? '');
    if (w.rules.lead) w.lead = leadOf(heading, w.metadata.description);
    if (heading && w.rules.opening) w.opening = paragraphsAfter(heading);
    if (heading?.closest('article') && w.rules.itemRuns)
      w.articleOpening = w.opening ?? paragraphsAfter(heading);
    if (w.rules.itemRuns && w.source.body)
      w.runWords = itemRun(w.source.body as unknown as Element, !!w.rules.articleParts)?.words;
    if (w.rules.mainBlock && !w.statesArticle && w.source.body)
      w.mainWords = mainWords(w.source.body as unknown as Element);
  } catch {
    w.broken = true; // a hostile tree: the whole body is the fallback (see chooseArticle)
  }
};

/** Readability's article (rule listCells in its scoring), and the page's title. */
const readArticle: Stage = (w) => {
  w.article = null;
  if (!w.broken) {
    try {
      // The serializer hands back the article element itself: no serialise-and-parse round trip.
      const reader = new Readability<Element>(w.source as unknown as Document, {
        keepClasses: false,
        serializer: (el) => el as Element,
      });
      const unscored = w.rules.listCells ? isListCell : undefined;
      tuneReadability(reader, elementsWithTags, unscored, (page) => (w.spare = page));
      w.article = reader.parse();
    } catch {
      w.article = null; // Readability gives up on some hostile trees; the whole body is the fallback.
    }
  }
  const found = w.article?.title || w.head.title || w.docTitle;
  w.title = tidy(w.siteNamed && found === w.docTitle ? withoutSiteName(found) : found);
};

/**
 * The block Readability chose, cleaned by the rules of stage 'clean' (clean-article.ts); with no
 * article, or one the cleaning left thin (rule thinArticle), the page less its furniture.
 */
const chooseArticle: Stage = (w) => {
  // The page less its furniture stands in: a product's, cleaned as the block is (rule productPage).
  const page = (short = false) => pageStandingIn(w, wholePage(w, short), w.rules.productPage);
  if (!w.article?.content) {
    w.root = page();
    return;
  }
  const root = w.article.content as unknown as HTMLElement;
  const before = w.rules.thinArticle ? wordCount(root.textContent ?? '', THIN_WORDS) : 0;
  cleanArticle(root, w.rules, w.baseUrl);
  unwrapPage(root);
  w.root = root;
  // A block the cleaning left thin was not the article (a form, a notice, a link list): the page
  // less its furniture holds more of it. An article short from the start stays as it is, unless
  // the page holds FAR_MORE times its words and more than a short article's: it was a corner of
  // a page of other things (a list, a grid of items).
  if (!w.rules.thinArticle) return;
  const words = wordCount(root.textContent ?? '', THIN_WORDS);
  if (words >= THIN_WORDS) return;
  const short = before < THIN_WORDS;
  const rest = page(short);
  const enough = short ? Math.max(FAR_MORE * words, FAR_MORE * THIN_WORDS) : words + 1;
  if (wordCount(rest.textContent ?? '', enough) >= enough) w.root = rest;
};

/**
 * A thread's posts as its microdata marks them (rule statedPosts, see stated-posts.ts), from the
 * page parsed again, when they hold most of the content's words or more: Readability keeps one.
 */
const threadPosts: Stage = (w) => {
  if (!w.rules.statedPosts || !mayStatePosts(w.html)) return;
  const doc = parse(w.html, w.baseUrl) as unknown as Document;
  const posts = statedPosts(doc, w.html);
  if (posts.length === 0 || !postsAreFuller(posts, w.root!.textContent ?? '')) return;
  const root = doc.createElement('div');
  for (const post of posts) root.appendChild(post);
  cleanArticle(root as unknown as HTMLElement, w.rules, w.baseUrl);
  w.root = root as unknown as HTMLElement;
};

/**
 * A page of items (rule itemRuns, see item-runs.ts): its largest run's block, cleaned as a list's
 * block is (link lists and teasers kept), stands in for the content when it holds far more words.
 */
const itemRuns: Stage = (w) => {
  if (!w.rules.itemRuns || w.picked) return;
  const enough = wordsToStandIn(wordCount(w.root!.textContent ?? ''), w.statesArticle);
  if ((w.runWords ?? 0) < enough) return; // the run as the page held it before Readability
  const page = wholePage(w, true) as unknown as Element;
  const block = runStandingIn(page, enough, !!w.rules.articleParts) as HTMLElement | undefined;
  if (!block || besideArticle(block, w.heading ?? '', w.articleOpening, w.root!)) return;
  cleanArticle(block, w.rules, w.baseUrl, true);
  if (wordCount(block.textContent ?? '', enough) >= enough) w.root = block;
};

/**
 * A page that does not state it is an article (rule mainBlock, see main-block.ts): its `<main>`,
 * cleaned as the chosen block is (as a run's block, teasers kept, when that block was a corner),
 * stands in for the content when it holds half again its words or more.
 */
const mainBlock: Stage = (w) => {
  if (!w.rules.mainBlock || w.statesArticle) return;
  const words = wordCount(w.root!.textContent ?? '');
  const enough = wordsForMain(words);
  if ((w.mainWords ?? 0) < enough) return; // <main> as the page held it before Readability
  const main = mainOf(wholePage(w, true) as unknown as Element, enough) as HTMLElement | undefined;
  if (!main) return;
  const titles = [w.title, w.heading ?? ''];
  cleanArticle(main, w.rules, w.baseUrl, isCorner(words, w.root!.textContent ?? '', titles));
  if (wordCount(main.textContent ?? '', enough) >= enough) w.root = main;
};

/**
 * The article the page states, when it is far fuller: in its JSON-LD (rule statedBody, see
 * stated-body.ts), or in the state its scripts render from (rule scriptState, script-state.ts).
 */
const standIn: Stage = (w) => {
  const stated = w.rules.statedBody ? statedParagraphs(w.ld) : undefined;
  const held = stated ?? (w.rules.scriptState && thin(w.root!) ? stateParagraphs(w.page) : undefined);
  if (!held || !statedIsFuller(held, w.root!.textContent ?? '')) return;
  const root = w.source.createElement('div');
  for (const text of held) root.appendChild(w.source.createElement('p')).textContent = text;
  w.root = root as unknown as HTMLElement;
};

/**
 * What the article lacks put back: its opening and lead (read by precleanPage), the recipe the
 * page states (rule statedRecipe, see stated-recipe.ts).
 */
const complete: Stage = (w) => {
  const root = w.root as unknown as Element;
  if (w.opening) withOpening(root, w.opening);
  if (w.lead) withLead(root, w.lead);
  if (w.rules.statedRecipe) withStatedRecipe(root, w.ld);
  if (w.rules.repeats) withoutRepeats(root);
};

/** The steps of an extraction, in order; writing the formats follows them (see written). */
export const STAGES: readonly Stage[] = [
  parsePage,
  readPage,
  dropExcluded,
  takeIncluded,
  precleanPage,
  readArticle,
  chooseArticle,
  threadPosts,
  itemRuns,
  mainBlock,
  standIn,
  complete,
];

/** A block with fewer words than this once cleaned is thin (see rule thinArticle). */
const THIN_WORDS = 50;
/** A thin block from the start gives way to a page that holds this many times more (and of THIN_WORDS). */
const FAR_MORE = 4;

/**
 * An article of fewer words than this may be a script-built page's shell or teaser, and is
 * checked against the state its scripts render from.
 */
const SHELL_WORDS = 100;

function thin(root: HTMLElement): boolean {
  return wordCount(root.textContent ?? '', SHELL_WORDS) < SHELL_WORDS;
}
