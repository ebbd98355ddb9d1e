/**
 * The raw facts a page gives about itself in its markup (see Head), gathered before any cleaning
 * changes the document; metadata.ts chooses among them.
 */
import type { ElementTree } from './element-tree';
import { cleanText, stated } from './stated-text';

/**
 * What the page says of itself, read in one walk over its elements (each CSS selector query walks
 * them all): meta contents by lower-cased name, every meta content, JSON-LD, the canonical link,
 * the first time, the first byline element.
 */
export interface Head {
  meta: Map<string, string>;
  /** Every meta content, trimmed. */
  contents: Set<string>;
  /** `og:title`, then `twitter:title`, by their exact attribute (the title's fallback). */
  title: string;
  ldScripts: Element[];
  canonical: string | null;
  time: string | null;
  byline: Element | null;
}

/** The first element that names itself a byline or its author: rel/itemprop author, or by class. */
function isByline(el: Element): boolean {
  if (el.getAttribute('rel') === 'author' || el.getAttribute('itemprop') === 'author') return true;
  const cls = el.getAttribute('class');
  if (!cls) return false;
  return cls.includes('byline') || cls.split(/\s+/).some((c) => c === 'author' || c === 'author-name');
}

export function readHead(doc: Document): Head {
  const head: Head = {
    meta: new Map(),
    contents: new Set(),
    title: '',
    ldScripts: [],
    canonical: null,
    time: null,
    byline: null,
  };
  let og = '';
  let twitter = '';
  const root = doc as unknown as ElementTree;
  let t = root.firstElementChild;
  while (t) {
    const el = t as unknown as Element;
    const tag = t.localName;
    if (tag === 'meta') {
      const raw = el.getAttribute('content');
      if (raw !== null) head.contents.add(raw.trim());
      const content = stated(raw);
      if (content) {
        for (const attr of ['property', 'name', 'itemprop', 'http-equiv']) {
          // Names are matched without case: DC.creator and dc.creator are one. The first one stands.
          // A property may list several names (RDFa): "dc:description og:description".
          const names = el.getAttribute(attr)?.trim().toLowerCase();
          if (!names) continue;
          for (const k of attr === 'property' ? names.split(/\s+/) : [names]) {
            if (!head.meta.has(k)) head.meta.set(k, content);
          }
        }
        if (!og && el.getAttribute('property') === 'og:title') og = raw!.trim();
        if (!twitter && el.getAttribute('name') === 'twitter:title') twitter = raw!.trim();
      }
    } else if (tag === 'script') {
      if ((el.getAttribute('type') ?? '').trim().toLowerCase() === 'application/ld+json')
        head.ldScripts.push(el);
    } else if (tag === 'link') {
      if (!head.canonical && (el.getAttribute('rel') ?? '').toLowerCase().split(/\s+/).includes('canonical'))
        head.canonical = cleanText(el.getAttribute('href'));
    } else if (tag === 'time' && !head.time) {
      head.time = cleanText(el.getAttribute('datetime'));
    }
    if (!head.byline && isByline(el)) head.byline = el;
    const child = tag === 'template' ? null : t.firstElementChild;
    if (child) {
      t = child;
      continue;
    }
    while (t !== root && !t.nextElementSibling) t = t.parentNode!;
    t = t === root ? null : t.nextElementSibling;
  }
  head.title = og || twitter;
  return head;
}
