/**
 * What a page says about itself: author, publication time, language, site, description, canonical
 * URL and lead image. Each is read from the most deliberate source first: JSON-LD, then
 * OpenGraph and article meta tags, then other meta tags, then the page itself (a byline element,
 * a <time>, <html lang>, <link rel=canonical>). The sources are read by page-head.ts and
 * json-ld.ts; this file chooses among them.
 */
import { truncateUtf8 } from '../common/truncate';
import { jsonLd, names, typeOf, url, type Json } from './json-ld';
import type { Head } from './page-head';
import { cleanText, stated } from './stated-text';

export interface Metadata {
  author: string | null;
  published_at: string | null;
  language: string | null;
  site_name: string | null;
  description: string | null;
  canonical_url: string | null;
  image: string | null;
  /** A document's pages, all of them (not only those read; a workbook's sheets, a deck's slides); pages have none. */
  pages?: number;
  /** A document's text was read (some of it) by OCR. */
  ocr?: boolean;
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

/** A metadata field's bound in UTF-8 bytes; a description's is twice it. */
export const FIELD_BYTES = 2048;
export const DESCRIPTION_BYTES = 4096;

/** The text within `bytes` of UTF-8: cut at a character, ending in an ellipsis, when longer. */
export function boundedText(s: string | null, bytes: number): string | null {
  if (s === null) return null;
  const cut = truncateUtf8(s, bytes);
  return cut.truncated ? `${truncateUtf8(s, bytes - 3).text.trimEnd()}…` : s;
}

/** A URL within `bytes`, or none: a cut URL is another URL. */
function boundedUrl(s: string | null, bytes: number): string | null {
  return s !== null && Buffer.byteLength(s) <= bytes ? s : null;
}

/** Every field within its bound (see FIELD_BYTES): the page chooses their lengths. */
function bounded(m: Metadata): Metadata {
  return {
    author: boundedText(m.author, FIELD_BYTES),
    published_at: boundedText(m.published_at, FIELD_BYTES),
    language: boundedText(m.language, FIELD_BYTES),
    site_name: boundedText(m.site_name, FIELD_BYTES),
    description: boundedText(m.description, DESCRIPTION_BYTES),
    canonical_url: boundedUrl(m.canonical_url, FIELD_BYTES),
    image: boundedUrl(m.image, FIELD_BYTES),
  };
}

const ARTICLE_TYPES = /article|posting|report|blog|news|webpage|review|recipe|howto|creativework/i;

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
    cleanText(el?.textContent)
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
export function pageMetadata(
  doc: Document,
  head: Head,
  baseUrl: string,
  ld: Json[] = jsonLd(head.ldScripts),
): Metadata {
  const article = ld.find(
    (o) => ARTICLE_TYPES.test(typeOf(o)) && (o.headline || o.author || o.datePublished),
  );
  const site = ld.find((o) => /website|organization/i.test(typeOf(o)) && typeof o.name === 'string');
  const html = doc.documentElement;
  return bounded({
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
      cleanText(html?.getAttribute('lang'))?.toLowerCase() ??
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
  });
}

/** When the page's metadata has no description, the first paragraph of its main content stands in. */
export function withDescription(m: Metadata, content: Element): Metadata {
  if (m.description) return m;
  for (const p of Array.from(content.querySelectorAll('p'))) {
    const t = cleanText(p.textContent);
    if (t) return { ...m, description: boundedText(t, DESCRIPTION_BYTES) };
  }
  return m;
}
