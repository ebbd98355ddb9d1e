import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { cleanArticle, precleanSource } from './clean';
import { limitDepth } from './flatten';
import { htmlText, tidy } from './html-text';

export type Format = 'markdown' | 'text' | 'html';

export interface Extraction {
  title: string;
  content: string;
}

// linkedom: a fast, spec-enough DOM for Readability (jsdom is several times slower at parse).
// Readability: the reference main-content algorithm. turndown: the kept HTML-to-markdown converter.
const gfm = require('turndown-plugin-gfm') as { gfm: TurndownService.Plugin };
function markdownConverter(withGfm: boolean): TurndownService {
  const t = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  if (withGfm) t.use(gfm.gfm);
  t.remove(['script', 'style', 'noscript', 'iframe', 'form', 'button'] as TurndownService.Filter);
  return t;
}
const withTables = markdownConverter(true);
// The gfm table rules read DOM properties linkedom lacks on some tables; without them, tables
// come out as text rows instead of failing the page.
const plain = markdownConverter(false);

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

function metaContent(doc: Document, selectors: string[]): string {
  for (const s of selectors) {
    const v = doc.querySelector(s)?.getAttribute('content')?.trim();
    if (v) return v;
  }
  return '';
}

/** Main content of an html page, as markdown, text or cleaned html, with its title. */
export function extractHtml(page: string, baseUrl: string, format: Format): Extraction {
  const html = limitDepth(page);
  // One parse serves both the title fallback (read first) and Readability (which mutates it).
  const source = parse(html, baseUrl);
  const docTitle = (source.title ?? '').trim();
  // A document title with a dash that no metadata repeats may end in the site's name.
  const siteNamed =
    /\s[–—]\s/.test(docTitle) &&
    !Array.from(source.querySelectorAll('meta[content]')).some(
      (m) => m.getAttribute('content')?.trim() === docTitle,
    );
  const fallbackTitle =
    metaContent(source, ['meta[property="og:title"]', 'meta[name="twitter:title"]']) || docTitle;
  let article: ReturnType<Readability<Element>['parse']> = null;
  try {
    precleanSource(source as unknown as Document);
    // The serializer hands back the article element itself: no serialise-and-parse round trip.
    article = new Readability<Element>(source as unknown as Document, {
      keepClasses: false,
      serializer: (el) => el as Element,
    }).parse();
  } catch {
    article = null; // Readability gives up on some hostile trees; the whole body is the fallback below.
  }
  const found = article?.title || fallbackTitle;
  const title = tidy(siteNamed && found === docTitle ? withoutSiteName(found) : found);
  if (article?.content) {
    const root = article.content as unknown as HTMLElement;
    cleanArticle(root);
    return { title, content: render(root, root.innerHTML, format) };
  }
  // No article found: the whole page less its furniture, from a fresh parse (the first was changed).
  const doc = parse(html, baseUrl);
  const body = doc.body ?? doc.documentElement;
  for (const el of Array.from(
    body.querySelectorAll<Element>('script,style,noscript,nav,header,footer,aside,form,template'),
  )) {
    el.remove();
  }
  return { title, content: render(body, body.innerHTML, format) };
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

function render(body: HTMLElement, html: string, format: Format): string {
  if (format === 'html') return html.trim();
  if (format === 'text') return htmlText(body as unknown as Parameters<typeof htmlText>[0]);
  const node = body as unknown as TurndownService.Node;
  try {
    return withTables.turndown(node).trim();
  } catch {
    return plain.turndown(node).trim();
  }
}
