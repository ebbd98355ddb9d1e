/**
 * What a page says about itself: author, publication time, language, site, description, canonical
 * URL and lead image. Each is read from the most deliberate source first: JSON-LD, then
 * OpenGraph and article meta tags, then other meta tags, then the page itself (a byline element,
 * a <time>, <html lang>, <link rel=canonical>).
 */
export interface Metadata {
  author: string | null;
  published_at: string | null;
  language: string | null;
  site_name: string | null;
  description: string | null;
  canonical_url: string | null;
  image: string | null;
}

export const NO_METADATA: Metadata = {
  author: null,
  published_at: null,
  language: null,
  site_name: null,
  description: null,
  canonical_url: null,
  image: null,
};

type Json = Record<string, unknown>;

const ARTICLE_TYPES = /article|posting|report|blog|news|webpage|review|recipe|howto|creativework/i;

/** Every JSON-LD object of the page, @graph members included. */
function jsonLd(scripts: Element[]): Json[] {
  const out: Json[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      out.push(v as Json);
      if (Array.isArray((v as Json)['@graph'])) walk((v as Json)['@graph']);
    }
  };
  for (const s of scripts) {
    try {
      // A script written for XHTML wraps its JSON in CDATA or a comment.
      walk(JSON.parse((s.textContent ?? '').replace(/^\s*(?:<!\[CDATA\[|<!--)|(?:\]\]>|-->)\s*$/g, '')));
    } catch {
      // Broken JSON-LD is common; the other sources stand in.
    }
  }
  return out;
}

function typeOf(o: Json): string {
  const t = o['@type'];
  return Array.isArray(t) ? t.join(' ') : typeof t === 'string' ? t : '';
}

/** A name from a string, a {name} object, or a list of them. */
function names(v: unknown): string | null {
  if (typeof v === 'string') return stated(v);
  if (Array.isArray(v)) {
    const all = v.map(names).filter((x): x is string => !!x);
    return all.length > 0 ? all.join(', ') : null;
  }
  if (v && typeof v === 'object') return names((v as Json).name);
  return null;
}

function url(v: unknown): string | null {
  if (typeof v === 'string') return stated(v);
  if (Array.isArray(v)) return url(v[0]);
  if (v && typeof v === 'object') return url((v as Json).url ?? (v as Json)['@id']);
  return null;
}

function clean(s: string | null | undefined): string | null {
  const t = (s ?? '').replace(/\s+/g, ' ').trim();
  return t.length > 0 && t.length <= 2000 ? t : null;
}

const NAMED: Record<string, string> = { quot: '"', amp: '&', apos: "'", lt: '<', gt: '>' };

/**
 * Character references still in a value the page meant as text: attribute values escaped twice
 * (`&amp;#039;`), JSON-LD strings written HTML-escaped. Numeric ones and the five XML names are
 * read; a reference to no character reads U+FFFD; anything else stays as written.
 */
export function unescapeRefs(s: string): string {
  if (!s.includes('&')) return s;
  return s
    .replace(/&(quot|amp|apos|lt|gt);/g, (_, name: string) => NAMED[name])
    .replace(/&#(?:x([0-9a-f]+)|([0-9]+));/gi, (_, hex: string | undefined, dec: string | undefined) => {
      const n = parseInt(hex ?? dec!, hex ? 16 : 10);
      return String.fromCodePoint(n === 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) ? 0xfffd : n);
    });
}

/** A value the page states about itself (a meta content, a JSON-LD string), as text. */
function stated(s: string | null | undefined): string | null {
  return clean(s && unescapeRefs(s));
}

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

interface Tree {
  localName: string;
  firstElementChild: Tree | null;
  nextElementSibling: Tree | null;
  parentNode: Tree | null;
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
  const root = doc as unknown as Tree;
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
        head.canonical = clean(el.getAttribute('href'));
    } else if (tag === 'time' && !head.time) {
      head.time = clean(el.getAttribute('datetime'));
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

function meta(head: Head, ...keys: string[]): string | null {
  for (const k of keys) {
    const v = head.meta.get(k);
    if (v) return v;
  }
  return null;
}

function absolute(u: string | null, base: string): string | null {
  if (!u) return null;
  try {
    const r = new URL(u, base);
    return r.protocol === 'http:' || r.protocol === 'https:' ? r.href : null;
  } catch {
    return null;
  }
}

/** An ISO-8601 time, when the value is a date at all. */
function isoTime(v: string | null): string | null {
  if (!v) return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** A byline in the page: rel=author, or an element whose class or itemprop says author/byline. */
function bylineText(el: Element | null): string | null {
  const t =
    clean(el?.textContent)
      ?.replace(/^by\s+/i, '')
      // "Name — Apr 16, 2015 8:02 pm": a spaced dash or bar, then words with a number, is a date.
      .replace(/\s+[-–—|·•]\s+(?=[^-–—|·•]*\d)[^]*$/, '')
      // "Name January 18, 2017 11:00 PM": a month, a day and a year end the name.
      .replace(
        /\s+(?:on\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b[^]*$/i,
        '',
      )
      // A separator left at the end, the date it led to being elsewhere in the markup.
      .replace(/[\s\-–—|·•,:]+$/, '') ?? null;
  return t && t.length <= 100 ? t : null;
}

/** Read before any cleaning changes the document. */
export function pageMetadata(doc: Document, head: Head, baseUrl: string): Metadata {
  const ld = jsonLd(head.ldScripts);
  const article = ld.find(
    (o) => ARTICLE_TYPES.test(typeOf(o)) && (o.headline || o.author || o.datePublished),
  );
  const site = ld.find((o) => /website|organization/i.test(typeOf(o)) && typeof o.name === 'string');
  const html = doc.documentElement;
  return {
    author:
      names(article?.author) ??
      meta(
        head,
        // Dublin Core as RDFa properties first: the form it defines; then as meta names.
        'dc:creator',
        'dcterms:creator',
        'dc.creator',
        'dcterms.creator',
        'author',
        'article:author',
        'parsely-author',
        'sailthru.author',
      ) ??
      bylineText(head.byline),
    published_at: isoTime(
      (typeof article?.datePublished === 'string' ? article.datePublished : null) ??
        meta(
          head,
          'article:published_time',
          'datePublished',
          'parsely-pub-date',
          'pubdate',
          'publishdate',
          'date',
          'dc:date',
          'dcterms:created',
          'dc.date',
          'dcterms.created',
        ) ??
        head.time,
    ),
    language:
      clean(html?.getAttribute('lang'))?.toLowerCase() ??
      meta(head, 'og:locale', 'language', 'content-language')?.replace('_', '-').toLowerCase() ??
      null,
    site_name:
      meta(head, 'og:site_name', 'application-name') ??
      names((article?.publisher as Json | undefined)?.name) ??
      (site ? names(site.name) : null) ??
      // A Twitter handle names the site last, without its @.
      meta(head, 'twitter:site')?.replace(/^@/, '') ??
      null,
    description:
      (typeof article?.description === 'string' ? stated(article.description) : null) ??
      meta(
        head,
        'dc:description',
        'dcterms:description',
        'dc.description',
        'dcterms.description',
        'og:description',
        'description',
        'twitter:description',
      ),
    canonical_url: absolute(head.canonical ?? meta(head, 'og:url'), baseUrl),
    image: absolute(meta(head, 'og:image', 'og:image:url', 'twitter:image') ?? url(article?.image), baseUrl),
  };
}

/** When the page's metadata has no description, the first paragraph of its main content stands in. */
export function withDescription(m: Metadata, content: Element): Metadata {
  if (m.description) return m;
  for (const p of Array.from(content.querySelectorAll('p'))) {
    const t = clean(p.textContent);
    if (t) return { ...m, description: t };
  }
  return m;
}
