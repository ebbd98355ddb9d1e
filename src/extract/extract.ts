/**
 * An html page's main content, title and metadata: the page parsed within a depth, cleaned around
 * Readability (or cut to the caller's selectors), and written in the format asked for.
 */
// First: linkedom must find its event target replaced when it loads.
import { readClassFromAttribute } from '../tuning/linkedom';
import { Readability } from '@mozilla/readability';
import { Element as DomElement, parseHTML } from 'linkedom';
import { cleanArticle } from './clean-article';
import { ALL_RULES, type CleanRules } from './clean';
import { elementsWithTags, type ElementTree, treeDepth } from './element-tree';
import { MAX_DEPTH, fewTags, limitDepth } from './flatten';
import { htmlText, tidy } from './html-text';
import { type Link, linksOf } from './links';
import { boundedText, FIELD_BYTES, pageMetadata, withDescription, type Metadata } from './metadata';
import { jsonLd } from './json-ld';
import { readHead } from './page-head';
import { precleanSource } from './preclean';
import { writeEach, type Format } from './write';
import { titleHeadingAsReadability, unwrapPage } from './headings';
import { leadOf, withLead } from './lead';
import { paragraphsAfter, withOpening } from './opening';
import { isListCell } from './list-cells';
import { SelectorRun } from './selector-run';
import { statedIsFuller, statedParagraphs } from './stated-body';
import { withStatedRecipe } from './stated-recipe';
import { stateParagraphs } from './script-state';
import { tuneReadability } from '../tuning/readability';
import { VERDICT_READ_CHARS, wordCount } from './verdict';

export type { Format };

export interface Extraction {
  title: string;
  /** The content in the format asked for. */
  content: string;
  /**
   * The content in that format, in each of `formats` and in html (the article's own elements,
   * from which every format can be written again: see writeArticle).
   */
  contents?: Partial<Record<Format, string>>;
  metadata: Metadata;
  /** With `links`: the links of the main content, absolute, in document order (see links.ts). */
  links?: Link[];
  /** Some of the links were left out or cut at their bounds. */
  linksTruncated?: boolean;
  /** With `pageLinks`: the links of the whole page (navigation and footer too), as it was fetched. */
  pageLinks?: Link[];
  /**
   * With `include` selectors: the page's own text (its first VERDICT_READ_CHARS), which the
   * verdict judges: a short selection of a full page is not an empty page.
   */
  pageText?: string;
}

export interface ExtractOptions {
  /** List the main content's links. */
  links?: boolean;
  /** List the whole page's links too (a crawl follows them), read before anything is removed. */
  pageLinks?: boolean;
  /** CSS selectors: the content is what they match, in document order (Readability is not asked). */
  include?: string[];
  /** CSS selectors: what they match is removed before anything else. */
  exclude?: string[];
  /** Cleaning rules to run (all by default; turned off one by one only to measure them). */
  rules?: CleanRules;
  /** More formats to write the content in, beside the one asked for. */
  formats?: Format[];
}

readClassFromAttribute(DomElement);

// linkedom: a fast, spec-enough DOM for Readability (jsdom is several times slower at parse).
// Readability: the reference main-content algorithm.
function parse(html: string, baseUrl: string) {
  let { document } = parseHTML(html);
  // A fragment (no <html>/<body>): browsers put it in a body, so do the same.
  if (document.documentElement?.tagName !== 'HTML' || !document.body)
    document = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`).document;
  else moveIntoBody(document.body as unknown as Node);
  // Readability resolves relative links against the document's base.
  if (!document.querySelector('base[href]') && document.head) {
    const base = document.createElement('base');
    base.setAttribute('href', baseUrl);
    document.head.appendChild(base);
  }
  return document;
}

/**
 * A page with no <body> tag: the parser makes an empty body after the head and leaves the page's
 * content beside it. Browsers put what follows the head in the body; so does this.
 */
function moveIntoBody(body: Node): void {
  for (let n = body.nextSibling; n;) {
    const next = n.nextSibling;
    body.appendChild(n);
    n = next;
  }
}

/**
 * The page parsed, no element deeper than MAX_DEPTH, and the html that was parsed. A page with
 * few tags is parsed as it is and its tree measured (deep nesting costs the parser time in the
 * square of the depth, bounded here by the number of tags): a page is tokenized once, not twice.
 * A deeper tree, or a page with more tags, is parsed from limitDepth's html.
 */
export function parseWithinDepth(
  page: string,
  baseUrl: string,
): { html: string; source: ReturnType<typeof parse> } {
  if (fewTags(page)) {
    const source = parse(page, baseUrl);
    if (treeDepth(source.documentElement as unknown as ElementTree) <= MAX_DEPTH)
      return { html: page, source };
  }
  const html = limitDepth(page);
  return { html, source: parse(html, baseUrl) };
}

/** Main content of an html page, as markdown, text or cleaned html, with its title and metadata. */
export function extractHtml(
  page: string,
  baseUrl: string,
  format: Format,
  opts: ExtractOptions = {},
): Extraction {
  // One parse serves the title fallback and the metadata (read first) and Readability (which mutates it).
  const { html, source } = parseWithinDepth(page, baseUrl);
  const head = readHead(source as unknown as Document);
  const ld = jsonLd(head.ldScripts);
  const metadata = pageMetadata(source as unknown as Document, head, baseUrl, ld);
  const whole = opts.pageLinks
    ? { pageLinks: linksOf(source.documentElement as unknown as HTMLElement, baseUrl).links }
    : {};
  const done = (title: string, root: HTMLElement): Extraction => {
    // Read before writing, which rewrites formulas.
    const described = withDescription(metadata, root as unknown as Element);
    const found = opts.links ? linksOf(root, baseUrl) : undefined;
    const links = found ? { links: found.links, ...(found.truncated ? { linksTruncated: true } : {}) } : {};
    // A title is held to a metadata field's bound: a page's <title> may be megabytes.
    const bounded = boundedText(title, FIELD_BYTES) ?? '';
    const contents = writeEach(root, [...new Set<Format>([format, ...(opts.formats ?? []), 'html'])]);
    return { title: bounded, content: contents[format]!, contents, metadata: described, ...links, ...whole };
  };
  // The caller's selectors share one deadline on this page (selector_too_costly past it).
  const selectors = new SelectorRun();
  if (opts.exclude?.length) {
    for (const el of selectors.all(source as unknown as Document, opts.exclude)) el.remove();
  }
  if (opts.include?.length) {
    // The caller knows where the content is: what the selectors match in the body, outermost
    // only. In document order an element inside an earlier match is inside the last one kept.
    const title = tidy(head.title || (source.title ?? ''));
    const body = source.body as Element | null;
    const picked: Element[] = [];
    for (const el of selectors.all(source as unknown as Document, opts.include)) {
      if (!body || !(el === body || body.contains(el))) continue;
      if (picked.length === 0 || !picked[picked.length - 1].contains(el)) picked.push(el);
    }
    const pageText = body
      ? htmlText(body as unknown as Parameters<typeof htmlText>[0]).slice(0, VERDICT_READ_CHARS)
      : '';
    const root = source.createElement('div');
    for (const el of picked) root.appendChild(el);
    return { ...done(title, root as unknown as HTMLElement), pageText };
  }
  const docTitle = (source.title ?? '').trim();
  // A document title with a dash that no metadata repeats may end in the site's name.
  const siteNamed = /\s[–—]\s/.test(docTitle) && !head.contents.has(docTitle);
  const fallbackTitle = head.title || docTitle;
  let article: ReturnType<Readability<Element>['parse']> = null;
  const rules = opts.rules ?? ALL_RULES;
  let lead: string | undefined;
  let opening: Element[] | undefined;
  try {
    const heading = precleanSource(source as unknown as Document, rules, [head.title, docTitle]);
    if (rules.lead) lead = leadOf(heading, metadata.description);
    if (heading && rules.opening) opening = paragraphsAfter(heading);
    // The serializer hands back the article element itself: no serialise-and-parse round trip.
    const reader = new Readability<Element>(source as unknown as Document, {
      keepClasses: false,
      serializer: (el) => el as Element,
    });
    tuneReadability(reader, elementsWithTags, rules.listCells ? isListCell : undefined);
    article = reader.parse();
  } catch {
    article = null; // Readability gives up on some hostile trees; the whole body is the fallback below.
  }
  const found = article?.title || fallbackTitle;
  const title = tidy(siteNamed && found === docTitle ? withoutSiteName(found) : found);
  // No article found: the whole page less its furniture, from a fresh parse (the first was changed).
  const wholePage = () => {
    const doc = parse(html, baseUrl);
    if (opts.exclude?.length) {
      for (const el of selectors.all(doc as unknown as Document, opts.exclude)) el.remove();
    }
    const body = doc.body ?? doc.documentElement;
    for (const el of Array.from(
      body.querySelectorAll<Element>('script,style,noscript,nav,header,footer,aside,form,template'),
    )) {
      el.remove();
    }
    titleHeadingAsReadability(body as unknown as Element, title);
    return body as unknown as HTMLElement;
  };
  const chosen = (): HTMLElement => {
    if (!article?.content) return wholePage();
    const root = article.content as unknown as HTMLElement;
    const before = rules.thinArticle ? wordCount(root.textContent ?? '', THIN_WORDS) : 0;
    cleanArticle(root, rules, baseUrl);
    unwrapPage(root);
    // A block the cleaning left thin was not the article (a form, a notice, a link list): the page
    // less its furniture holds more of it. An article short from the start stays as it is.
    if (before < THIN_WORDS) return root;
    const words = wordCount(root.textContent ?? '', THIN_WORDS);
    if (words >= THIN_WORDS) return root;
    const rest = wholePage();
    return wordCount(rest.textContent ?? '', words + 1) > words ? rest : root;
  };
  let root = chosen();
  // The article the page states in its JSON-LD, when it is far fuller (see stated-body.ts).
  const stated = rules.statedBody ? statedParagraphs(ld) : undefined;
  // Or in the state its scripts render from (see script-state.ts).
  const held = stated ?? (rules.scriptState && thin(root) ? stateParagraphs(page) : undefined);
  if (held && statedIsFuller(held, root.textContent ?? '')) {
    root = source.createElement('div') as unknown as HTMLElement;
    for (const text of held) root.appendChild(source.createElement('p')).textContent = text;
  }
  if (opening) withOpening(root as unknown as Element, opening);
  if (lead) withLead(root as unknown as Element, lead);
  // The recipe it states, when the article lacks its ingredients or steps (see stated-recipe.ts).
  if (rules.statedRecipe) withStatedRecipe(root as unknown as Element, ld);
  return done(title, root);
}

/** A block with fewer words than this once cleaned is thin (see CleanRules.thinArticle). */
const THIN_WORDS = 50;

/**
 * An article of fewer words than this may be a script-built page's shell or teaser, and is
 * checked against the state its scripts render from.
 */
const SHELL_WORDS = 100;

function thin(root: HTMLElement): boolean {
  return wordCount(root.textContent ?? '', SHELL_WORDS) < SHELL_WORDS;
}

/**
 * Readability cuts a site name off the document title at " | ", " - " and the like, but not at an
 * en or em dash. The same rule for those: the part before the last dash, when it keeps at least five
 * words (Readability's threshold for a plain hyphen). A title the page's metadata gives is kept
 * whole, as Readability keeps it.
 */
function withoutSiteName(title: string): string {
  const cut = Math.max(title.lastIndexOf(' – '), title.lastIndexOf(' — '));
  if (cut < 0) return title;
  const head = title.slice(0, cut).trim();
  return head.split(/\s+/).length >= 5 ? head : title;
}

/**
 * Cached article html (an Extraction's `contents.html`) written again in other formats, as
 * extractHtml would have written them: the page is not fetched or searched again.
 */
export function writeArticle(html: string, formats: Format[]): Partial<Record<Format, string>> {
  const { document } = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`);
  return writeEach(document.body as unknown as HTMLElement, formats);
}
