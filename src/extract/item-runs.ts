/**
 * A page's run of like items (rule itemRuns): the elements that share a shape (their tag and
 * classes, their parent's and their grandparent's) and hold the most words between them, with
 * the smallest block that holds them all. A list of links, a table's rows, a grid of products, a
 * page of posts: Readability scores paragraphs, and keeps one item of such a page or a corner of it.
 */
import { typeOf, type Json } from './json-ld';
import { wordCount } from './verdict';

/** A run has at least this many items. */
const MIN_ITEMS = 4;

/**
 * A run stands in for a block when it holds RUN_TIMES its words (and RUN_TIMES × RUN_WORDS); on a
 * page that states it is an article, ARTICLE_RUN_TIMES: there a run is more often its comments or
 * the site's other stories, and a list that is the article (a listicle) holds far more than a corner.
 */
const RUN_TIMES = 3;
const ARTICLE_RUN_TIMES = 8;
const RUN_WORDS = 20;

/**
 * The words a run's block needs to stand in for a block of `words`, on a page that states it is
 * an `article` or not (see statesArticle).
 */
export function wordsToStandIn(words: number, article: boolean): number {
  return (article ? ARTICLE_RUN_TIMES : RUN_TIMES) * Math.max(words, RUN_WORDS);
}

/**
 * Whether a page's JSON-LD or `og:type` says it is an article (or a blog post). An `og:type` of
 * article beside JSON-LD that names the page another thing (a WebPage, a CollectionPage, a
 * Product) and no article is a site's default for every page, not a statement.
 */
export function statesArticle(ogType: string | undefined, ld: Json[]): boolean {
  if (ld.some((o) => /(Article|BlogPosting)\b/.test(typeOf(o)))) return true;
  if (ld.some((o) => /(Page|Product)\b/.test(typeOf(o)))) return false;
  return ogType?.toLowerCase() === 'article';
}

/**
 * Whether a page's JSON-LD or `og:type` says it is a product (a shop's page), and none of its
 * JSON-LD that it is an article.
 */
export function statesProduct(ogType: string | undefined, ld: Json[]): boolean {
  if (ld.some((o) => /(Article|BlogPosting)\b/.test(typeOf(o)))) return false;
  return (
    ld.some((o) => /Product\b/.test(typeOf(o))) || /^(og:)?product(\.(item|group))?$/i.test(ogType ?? '')
  );
}

/**
 * The block of the largest run of like items on `page` (the page less its furniture) when it holds
 * `enough` words and its items half of them or more.
 */
export function runStandingIn(page: Element, enough: number, ownParts = true): Element | undefined {
  const run = itemRun(page, ownParts);
  return run && run.words >= enough && 2 * run.itemWords >= run.words ? run.block : undefined;
}

/**
 * Whether a run's `block` lies beside the article that `heading` opens in an `<article>`: the block
 * chosen (`chosen`) holds paragraphs of its `opening` (those that follow the heading), and the
 * run's block holds neither them nor the heading (the site's other stories below the article).
 */
export function besideArticle(
  block: Element,
  heading: string,
  opening: Element[] | undefined,
  chosen: Element,
): boolean {
  const kept = opening?.filter((p) => chosen.contains(p)) ?? [];
  if (!heading || kept.length === 0) return false;
  const text = (block.textContent ?? '').replace(/\s+/g, ' ');
  if (text.includes(heading)) return false;
  return !kept.some((p) => text.includes((p.textContent ?? '').replace(/\s+/g, ' ').trim()));
}

export interface ItemRun {
  /** The smallest block holding every item. */
  block: Element;
  /** The words of the block, and of its items. */
  words: number;
  itemWords: number;
}

/** The page's furniture: what wholePage (stages.ts) leaves out, and where no run is counted. */
export const FURNITURE_TAGS = [
  'script',
  'style',
  'noscript',
  'nav',
  'header',
  'footer',
  'aside',
  'form',
  'template',
];
const FURNITURE = new Set(FURNITURE_TAGS);
/** What the page less its furniture leaves out, as a selector. */
export const FURNITURE_SELECTOR = FURNITURE_TAGS.join(',');
/** A form around any of these is around the page (ASP.NET's one form), not a form on it. */
const PAGE_PARTS = 'main,article,nav,header,footer,h1';

/**
 * Whether `el` is the page's furniture (rule articleParts: a header inside an article is that
 * article's own, its title and teaser, not the page's, as HTML defines it; its footer, a byline and
 * tags, stays furniture).
 */
export function isFurniture(el: Element, ownParts = true): boolean {
  if (!FURNITURE.has(el.localName)) return false;
  if (el.localName === 'form') return el.querySelector(PAGE_PARTS) === null;
  return !(ownParts && el.localName === 'header' && el.parentElement?.closest('article'));
}

/** The page's furniture under `body` (see isFurniture), outermost only, in document order. */
export function outermostFurniture(body: Element, ownParts = true): Element[] {
  const found: Element[] = [];
  for (const el of Array.from(body.querySelectorAll<Element>(FURNITURE_SELECTOR))) {
    const last = found[found.length - 1];
    if ((last && last.contains(el)) || !isFurniture(el, ownParts)) continue;
    found.push(el);
  }
  return found;
}

/**
 * The block of the largest run of like items under `body` (by words), if any has MIN_ITEMS items;
 * what lies in the page's furniture is not counted.
 */
export function itemRun(body: Element, ownParts = true): ItemRun | undefined {
  const all = elementsOf(body, ownParts);
  const words = wordsOf([body, ...all]);
  const shapes = new Map<Element, string>();
  const runs = new Map<string, { items: Element[]; words: number }>();
  // An item inside an earlier item of its run (a div in a div in a div) is counted with it.
  for (const el of all) {
    const n = words.get(el)!;
    if (n === 0) continue;
    const parent = el.parentElement;
    const key = `${shape(parent?.parentElement, shapes)}>${shape(parent, shapes)}>${shape(el, shapes)}`;
    let run = runs.get(key);
    if (!run) runs.set(key, (run = { items: [], words: 0 }));
    else if (run.items[run.items.length - 1].contains(el)) continue;
    run.items.push(el);
    run.words += n;
  }
  let best: { items: Element[]; words: number } | undefined;
  for (const run of runs.values()) {
    if (run.items.length >= MIN_ITEMS && (!best || run.words > best.words)) best = run;
  }
  if (!best) return undefined;
  let block = best.items[0].parentElement ?? body;
  for (const item of best.items) {
    while (block !== body && !block.contains(item)) block = block.parentElement ?? body;
  }
  return { block, words: words.get(block) ?? 0, itemWords: best.words };
}

/** The elements under `root` in document order, none in or under its furniture. */
function elementsOf(root: Element, ownParts: boolean): Element[] {
  const all: Element[] = [];
  const walk = (el: Element) => {
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
      if (isFurniture(c, ownParts)) continue;
      all.push(c);
      walk(c);
    }
  };
  walk(root);
  return all;
}

/** Each element's words, its descendants' first (`all` in document order): one walk, not one per ancestor. */
function wordsOf(all: Element[]): Map<Element, number> {
  const words = new Map<Element, number>();
  for (let i = all.length - 1; i >= 0; i--) {
    let n = 0;
    for (let c = all[i].firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) n += wordCount(c.nodeValue ?? '');
      else if (c.nodeType === 1) n += words.get(c as Element) ?? 0;
    }
    words.set(all[i], n);
  }
  return words;
}

/**
 * An element's tag and classes, less those that name the item itself: with a digit (`post-4021`),
 * or of one character (a group of an A to Z index, `A`).
 */
function shape(el: Element | null | undefined, shapes: Map<Element, string>): string {
  if (!el) return '';
  let s = shapes.get(el);
  if (s === undefined) {
    const classes = (el.getAttribute('class') ?? '')
      .split(/\s+/)
      .filter((c) => c.length > 1 && !/\d/.test(c))
      .sort();
    s = [el.localName, ...classes].join('.');
    shapes.set(el, s);
  }
  return s;
}
