/** What the envelope's `metadata` takes from a document. */
export interface DocumentMetadata {
  title?: string;
  author?: string;
  /** The Subject (or XMP dc:description). */
  description?: string;
  /** The creation date, ISO 8601 in UTC. */
  published_at?: string;
  language?: string;
  /** Pages in the whole document (not only those read). */
  pages: number;
  /** Some of the text was read by OCR. */
  ocr?: boolean;
}

/** The XMP packet as pdf.js gives it: values by lower-case name, lists for dc:creator. */
export interface Xmp {
  get(name: string): unknown;
}

const MAX_FIELD = 1000;

/** A field's text: one line, no control characters, at most 1000 characters; empty is none. */
function clean(v: unknown): string | undefined {
  const s = Array.isArray(v) ? v.filter((x) => typeof x === 'string').join(', ') : v;
  if (typeof s !== 'string') return undefined;
  const t = s
    .replace(/[\p{Cc}\ufeff]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return t === '' ? undefined : t.slice(0, MAX_FIELD);
}

function iso(d: Date | null | undefined): string | undefined {
  return d && !Number.isNaN(d.getTime()) ? d.toISOString() : undefined;
}

/**
 * Metadata from the Info dictionary and the XMP packet. Title, author and description prefer XMP
 * (the newer store, in Unicode; PDF 2.0 deprecates the Info entries); the creation date prefers
 * Info's CreationDate; the language is the catalog's /Lang, else XMP dc:language.
 */
export function metadataOf(
  info: Record<string, unknown>,
  xmp: Xmp | null,
  pages: number,
  pdfDate: (s: string) => Date | null,
): DocumentMetadata {
  const x = (name: string) => (xmp ? clean(xmp.get(name)) : undefined);
  const created = typeof info.CreationDate === 'string' ? iso(pdfDate(info.CreationDate)) : undefined;
  const xmpCreated = x('xmp:createdate');
  const out: DocumentMetadata = {
    title: x('dc:title') ?? clean(info.Title),
    author: x('dc:creator') ?? clean(info.Author),
    description: x('dc:description') ?? clean(info.Subject),
    published_at: created ?? (xmpCreated ? iso(new Date(xmpCreated)) : undefined),
    language: clean(info.Language) ?? x('dc:language'),
    pages,
  };
  for (const k of Object.keys(out) as (keyof DocumentMetadata)[]) if (out[k] === undefined) delete out[k];
  return out;
}
