import type { RawPage } from '../fetch/fetcher';
import { truncateUtf8 } from '../common/truncate';
import { sha256Hex } from '../dcache';
import type { Format } from '../extract/extract';
import type { Link } from '../extract/links';
import type { Metadata } from '../extract/metadata';
import { verdictOf, type Verdict } from '../extract/verdict';
import { decodeBody } from '../fetch/decode';
import type { BrowserMeta } from './browser-step';
import type { ReadDocument } from './document-step';
import { linksWithin } from './links-budget';
import { isDocument, type PageMeta, type PageRequest, type SourceKind } from './page-types';

/** What reading a page's body gave, before it is cut to the cache's cap and kept. */
export interface Read {
  /** The html extracted from (after a render, the browser's); empty for other kinds. */
  html: string;
  finalUrl: string;
  status: number;
  verdict: Verdict;
  title: string;
  /** The text of a page kept as text; an html page's article in its first format. */
  content: string;
  /** The formats written: an html page's article as html and as asked; a document's three. */
  written: Partial<Record<Format, string>>;
  metadata?: Metadata;
  /** The whole page's links. */
  links?: Link[];
  linksCut?: boolean;
  /** The html as served, when asked to keep it. */
  raw?: string;
  shown?: BrowserMeta;
  doc?: ReadDocument;
}

/**
 * What the cache keeps of a page read: its source (an html page's or a document's html, or the
 * text) and the formats written, each cut to the largest class cap; the page's links within that
 * cap (an answer keeps those its texts leave room for; a crawl follows them all); and the
 * envelope's fields.
 */
export function keptOf(
  req: PageRequest,
  raw: RawPage,
  kind: SourceKind | undefined,
  read: Read,
  storeCap: number,
) {
  const formatted = kind === 'html' || isDocument(kind);
  const stored = truncateUtf8(formatted ? (read.written.html ?? read.content) : read.content, storeCap);
  const cut = stored.truncated || read.doc?.truncated === true;
  const formats = formatted
    ? {
        ...cutFormats(read.written, cut, storeCap),
        ...(read.raw !== undefined ? { raw_html: storedText(read.raw, false, storeCap) } : {}),
      }
    : undefined;
  const kept = read.links && linksWithin(read.links, storeCap);
  const meta: PageMeta = {
    url: req.url.href,
    final_url: read.finalUrl,
    status: read.status,
    content_type: raw.contentType,
    title: read.title,
    kind: kind ?? 'text',
    truncated: cut,
    ...(read.linksCut || kept?.cut ? { links_cut: true } : {}),
    ...(formats ? { formats } : {}),
    verdict: read.verdict,
    ...(read.doc?.hint ? { verdict_hint: read.doc.hint } : {}),
    ...(raw.etag ? { etag: raw.etag } : {}),
    ...(raw.lastModified ? { last_modified: raw.lastModified } : {}),
    ...(read.metadata ? { metadata: read.metadata } : {}),
    ...(kept ? { links: kept.links } : {}),
    ...read.shown,
  };
  return { stored, meta };
}

/** Markdown and text of an html page as the cache keeps them: each cut to the largest cap. */
export function cutFormats(
  written: Partial<Record<Format, string>>,
  sourceCut: boolean,
  storeCap: number,
): NonNullable<PageMeta['formats']> {
  const out: NonNullable<PageMeta['formats']> = {};
  for (const f of ['markdown', 'text'] as const) {
    const text = written[f];
    if (text !== undefined) out[f] = storedText(text, sourceCut, storeCap);
  }
  return out;
}

/** A text as the cache keeps it: cut to the largest cap, with its digest. */
function storedText(text: string, sourceCut: boolean, storeCap: number) {
  const cut = truncateUtf8(text, storeCap);
  return { text: cut.text, digest: sha256Hex(cut.text), truncated: cut.truncated || sourceCut };
}

/** JSON or plain text: kept as its text. */
export function readText(raw: RawPage, kind: SourceKind | undefined): Read {
  // An error answer of a kind sift does not read: its status, no text.
  const content = kind ? decodeBody(raw.body, raw.contentType, false) : '';
  const { finalUrl, status } = raw;
  return {
    html: '',
    finalUrl,
    status,
    verdict: verdictOf({ status, html: '', title: '', content, isHtml: false }),
    title: '',
    content,
    written: {},
  };
}
