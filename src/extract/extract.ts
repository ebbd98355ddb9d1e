// First: linkedom must find its event target replaced when it loads.
import { readClassFromAttribute } from '../tuning/linkedom';
import { Readability } from '@mozilla/readability';
import { Element as DomElement, parseHTML } from 'linkedom';
import { convert } from '@kreuzberg/html-to-markdown-node';
import { cleanArticle, precleanSource, type CleanRules } from './clean';
import { MAX_DEPTH, fewTags, limitDepth } from './flatten';
import { htmlText, tidy } from './html-text';
import { pageMetadata, readHead, withDescription, type Metadata } from './metadata';

export type Format = 'markdown' | 'text' | 'html';

export interface Extraction {
  title: string;
  content: string;
  metadata: Metadata;
  /** With `links`: the links of the main content, absolute, in document order. */
  links?: { url: string; text: string }[];
}

export interface ExtractOptions {
  /** List the main content's links. */
  links?: boolean;
  /** CSS selectors: the content is what they match, in document order (Readability is not asked). */
  include?: string[];
  /** CSS selectors: what they match is removed before anything else. */
  exclude?: string[];
  /** Cleaning rules to run (all by default; turned off one by one only to measure them). */
  rules?: CleanRules;
}

readClassFromAttribute(DomElement);

// linkedom: a fast, spec-enough DOM for Readability (jsdom is several times slower at parse).
// Readability: the reference main-content algorithm. html-to-markdown (native): HTML to markdown
// (GFM tables, fenced code), from the cleaned html that every format serializes anyway; about six
// times faster than node-html-markdown, whose output building is quadratic in the page's length.
const MARKDOWN = {
  bullets: '-',
  escapeAsterisks: true,
  escapeUnderscores: true,
  compactTables: true,
  extractMetadata: false,
  preprocessing: { enabled: false },
  excludeSelectors: ['script', 'style', 'noscript', 'iframe', 'form', 'button', 'template'],
};

function parse(html: string, baseUrl: string) {
  let { document } = parseHTML(html);
  // A fragment (no <html>/<body>): browsers put it in a body, so do the same.
  if (document.documentElement?.tagName !== 'HTML' || !document.body)
    document = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`).document;
  // Readability resolves relative links against the document's base.
  if (!document.querySelector('base[href]') && document.head) {
    const base = document.createElement('base');
    base.setAttribute('href', baseUrl);
    document.head.appendChild(base);
  }
  return document;
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
  const metadata = pageMetadata(source as unknown as Document, head, baseUrl);
  const done = (title: string, root: HTMLElement): Extraction => {
    // Read before rendering, which rewrites formulas.
    const described = withDescription(metadata, root as unknown as Element);
    const links = opts.links ? { links: linksOf(root, baseUrl) } : {};
    return { title, content: render(root, format), metadata: described, ...links };
  };
  if (opts.exclude?.length) {
    for (const el of Array.from(source.querySelectorAll(opts.exclude.join(',')))) el.remove();
  }
  if (opts.include?.length) {
    // The caller knows where the content is: what the selectors match, outermost only.
    const picked = Array.from(source.querySelectorAll<Element>(opts.include.join(','))).filter(
      (el, _i, all) => !all.some((other) => other !== el && other.contains(el)),
    );
    const root = source.createElement('div');
    for (const el of picked) root.appendChild(el);
    const title = tidy(head.title || (source.title ?? ''));
    return done(title, root as unknown as HTMLElement);
  }
  const docTitle = (source.title ?? '').trim();
  // A document title with a dash that no metadata repeats may end in the site's name.
  const siteNamed = /\s[–—]\s/.test(docTitle) && !head.contents.has(docTitle);
  const fallbackTitle = head.title || docTitle;
  let article: ReturnType<Readability<Element>['parse']> = null;
  try {
    precleanSource(source as unknown as Document, opts.rules, [head.title, docTitle]);
    // The serializer hands back the article element itself: no serialise-and-parse round trip.
    const reader = new Readability<Element>(source as unknown as Document, {
      keepClasses: false,
      serializer: (el) => el as Element,
    });
    tuneReadability(reader);
    article = reader.parse();
  } catch {
    article = null; // Readability gives up on some hostile trees; the whole body is the fallback below.
  }
  const found = article?.title || fallbackTitle;
  const title = tidy(siteNamed && found === docTitle ? withoutSiteName(found) : found);
  if (article?.content) {
    const root = article.content as unknown as HTMLElement;
    cleanArticle(root, opts.rules, baseUrl);
    return done(title, root);
  }
  // No article found: the whole page less its furniture, from a fresh parse (the first was changed).
  const doc = parse(html, baseUrl);
  if (opts.exclude?.length) {
    for (const el of Array.from(doc.querySelectorAll(opts.exclude.join(',')))) el.remove();
  }
  const body = doc.body ?? doc.documentElement;
  for (const el of Array.from(
    body.querySelectorAll<Element>('script,style,noscript,nav,header,footer,aside,form,template'),
  )) {
    el.remove();
  }
  return done(title, body as unknown as HTMLElement);
}

interface ReadabilityInternals {
  _getAllNodesWithTag: typeof elementsWithTags;
  _isProbablyVisible(node: Element): boolean;
  _grabArticle(): Element | null;
  _postProcessContent(el: Element): void;
}

/**
 * Three of Readability's steps done the same way for less: its element lists by tag name by one
 * walk over elements, not a CSS selector compiled and matched against every node at each call (a
 * sixth of its time); its visibility test reads `style` only on elements that have the attribute
 * (the getter builds a style declaration per element); and the article it found is not serialized
 * for a debug line that is never printed (`log("Grabbed: " + innerHTML)` runs even with debug off).
 */
export function tuneReadability(reader: Readability<Element>): void {
  const r = reader as unknown as ReadabilityInternals;
  r._getAllNodesWithTag = elementsWithTags;
  const visible = r._isProbablyVisible;
  r._isProbablyVisible = function (node) {
    if (node.hasAttribute('style')) return visible.call(this, node);
    return (
      !node.hasAttribute('hidden') &&
      (node.getAttribute('aria-hidden') !== 'true' ||
        (typeof node.className === 'string' && node.className.includes('fallback-image')))
    );
  };
  const grab = r._grabArticle;
  r._grabArticle = function () {
    const el = grab.call(this);
    // Shadows the getter until the next step, which is the one after the debug line.
    if (el) Object.defineProperty(el, 'innerHTML', { value: '', configurable: true });
    return el;
  };
  const post = r._postProcessContent;
  r._postProcessContent = function (el) {
    delete (el as { innerHTML?: string }).innerHTML;
    post.call(this, el);
  };
}

interface ElementTree {
  localName: string;
  firstElementChild: ElementTree | null;
  nextElementSibling: ElementTree | null;
  parentNode: ElementTree | null;
}

/** How many elements deep the tree under `root` goes, `root` counting as 1. */
export function treeDepth(root: ElementTree): number {
  let deepest = 1;
  let depth = 1;
  let el = root.localName === 'template' ? null : root.firstElementChild;
  if (el) depth++;
  while (el) {
    if (depth > deepest) deepest = depth;
    const child = el.localName === 'template' ? null : el.firstElementChild;
    if (child) {
      el = child;
      depth++;
      continue;
    }
    while (el !== root && !el.nextElementSibling) {
      el = el.parentNode!;
      depth--;
    }
    el = el === root ? null : el.nextElementSibling;
  }
  return deepest;
}

/**
 * The elements under `root` with one of `tags` (any case), in document order, as querySelectorAll
 * gives them (the content of a <template> is not searched).
 */
export function elementsWithTags(root: ElementTree, tags: string[]): ElementTree[] {
  // localName: a plain field; tagName upper-cases it at every read.
  const wanted = new Set(tags.map((t) => t.toLowerCase()));
  const out: ElementTree[] = [];
  let el = root.firstElementChild;
  while (el) {
    if (wanted.has(el.localName)) out.push(el);
    const child = el.localName === 'template' ? null : el.firstElementChild;
    if (child) {
      el = child;
      continue;
    }
    while (el !== root && !el.nextElementSibling) el = el.parentNode!;
    el = el === root ? null : el.nextElementSibling;
  }
  return out;
}

/** The links of the content: absolute http(s) URLs with their text, each URL once. */
function linksOf(root: HTMLElement, baseUrl: string): { url: string; text: string }[] {
  const seen = new Set<string>();
  const out: { url: string; text: string }[] = [];
  for (const a of Array.from(root.querySelectorAll('a[href]'))) {
    let u: URL;
    try {
      u = new URL(a.getAttribute('href') ?? '', baseUrl);
    } catch {
      continue;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || seen.has(u.href)) continue;
    seen.add(u.href);
    out.push({ url: u.href, text: tidy(a.textContent ?? '') });
  }
  return out;
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

function render(body: HTMLElement, format: Format): string {
  if (format === 'html') return body.innerHTML.trim();
  const tex = writeFormulas(body, format);
  if (format === 'text') return htmlText(body as unknown as Parameters<typeof htmlText>[0]);
  const markdown = (convert(collapseSpace(body.innerHTML), MARKDOWN).content ?? '').trim();
  return tex ? markdown.replace(tex.token, (t) => tex.written.get(t) ?? t) : markdown;
}

/** "{\displaystyle x}" is "x": the style is the renderer's choice. Other TeX is left as it is. */
function unstyled(tex: string): string {
  const m = /^\{\\(?:display|text)style\b\s*/.exec(tex);
  if (!m || !tex.endsWith('}')) return tex;
  // Only when the first brace is the one that closes last.
  let depth = 0;
  for (let i = 0; i < tex.length - 1; i++) {
    if (tex[i] === '\\') i++;
    else if (tex[i] === '{') depth++;
    else if (tex[i] === '}' && --depth === 0) return tex;
  }
  return tex.slice(m[0].length, -1).trim();
}

/** TeX, as pages give it beside a formula's MathML (KaTeX, MediaWiki): an annotation. */
const TEX = /^(application\/x-tex|tex)$/i;

/**
 * Each formula (`<math>`) becomes text, as a reader writes it: the TeX source when the page gives
 * it, else the formula's text (annotations left out: a browser does not show them). In markdown
 * TeX goes in `$…$`, `$$…$$` for a block, put in after the conversion through a token that the
 * converter leaves as it is (it would escape TeX's `_` and `\`). Returns the tokens, if any.
 */
function writeFormulas(
  body: HTMLElement,
  format: Format,
): { token: RegExp; written: Map<string, string> } | undefined {
  const formulas = Array.from(body.querySelectorAll('math'));
  if (formulas.length === 0) return undefined;
  const nonce = Math.random().toString(36).slice(2, 10);
  const written = new Map<string, string>();
  for (const math of formulas) {
    if (!body.contains(math)) continue; // inside a formula already written
    const notes = Array.from(math.querySelectorAll('annotation, annotation-xml'));
    const source = notes.find((a) => TEX.test(a.getAttribute('encoding') ?? ''));
    const tex = source && unstyled((source.textContent ?? '').replace(/\s+/g, ' ').trim());
    for (const a of notes) a.remove();
    let text = tex || (math.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (tex && format === 'markdown') {
      const token = `siftmath${nonce}n${written.size}z`;
      written.set(token, math.getAttribute('display') === 'block' ? `$$${tex}$$` : `$${tex}$`);
      text = token;
    }
    math.replaceWith(body.ownerDocument.createTextNode(text));
  }
  return written.size > 0 ? { token: new RegExp(`siftmath${nonce}n\\d+z`, 'g'), written } : undefined;
}

/**
 * Runs of whitespace outside <pre> become one space, as a browser shows them: the converter keeps
 * the source's line breaks inside a paragraph otherwise. (HTML's whitespace only: not U+00A0.)
 */
function collapseSpace(html: string): string {
  const collapse = (part: string) => part.replace(/[\t\n\f\r ]{2,}|[\t\n\f\r]/g, ' ');
  if (!/<pre\b/i.test(html)) return collapse(html);
  return html
    .split(/(<pre\b[\s\S]*?<\/pre>)/i)
    .map((part, i) => (i % 2 === 1 ? part : collapse(part)))
    .join('');
}
