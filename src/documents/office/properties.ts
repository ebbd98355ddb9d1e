import type { DocumentMetadata } from '../doc-metadata';
import { local, readXml } from './xml';
import type { Zip } from './zip';

const MAX_FIELD = 1000;

/** A field's text: one line, no control characters, at most 1000 characters; empty is none. */
function clean(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  const t = s
    .replace(/[\p{Cc}\ufeff]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return t === '' ? undefined : t.slice(0, MAX_FIELD);
}

/** The text of each element of a flat XML part, by local name (the first of each). */
function fields(zip: Zip, name: string): Map<string, string> {
  const out = new Map<string, string>();
  const bytes = zip.read(name);
  if (!bytes) return out;
  let open: string | undefined;
  let text = '';
  readXml(bytes, name, {
    open: (n) => {
      open = local(n);
      text = '';
    },
    text: (t) => {
      if (open && text.length < MAX_FIELD * 4) text += t;
    },
    close: (n) => {
      const k = local(n);
      if (k === open && !out.has(k)) out.set(k, text);
      open = undefined;
    },
  });
  return out;
}

function iso(s: string | undefined): string | undefined {
  if (!s) return undefined;
  const d = new Date(s.trim());
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/**
 * Metadata from an Office file's own properties (docProps/core.xml: Dublin Core) and, for its
 * page count, docProps/app.xml; an OpenDocument file's are in meta.xml, with the same names.
 */
export function propertiesOf(
  zip: Zip,
  pages: number,
  extra: Partial<DocumentMetadata> = {},
): DocumentMetadata {
  const core = zip.has('docProps/core.xml') ? fields(zip, 'docProps/core.xml') : fields(zip, 'meta.xml');
  const out: DocumentMetadata = {
    title: clean(core.get('title')),
    author: clean(core.get('creator') ?? core.get('initial-creator')),
    description: clean(core.get('description') ?? core.get('subject')),
    published_at: iso(core.get('created') ?? core.get('creation-date')),
    language: clean(core.get('language')),
    pages,
    ...extra,
  };
  for (const k of Object.keys(out) as (keyof DocumentMetadata)[]) if (out[k] === undefined) delete out[k];
  return out;
}

/** docProps/app.xml's count of a kind (Pages, Slides), when it states one. */
export function statedCount(zip: Zip, field: 'Pages' | 'Slides'): number | undefined {
  const n = Number(fields(zip, 'docProps/app.xml').get(field));
  return Number.isInteger(n) && n > 0 ? n : undefined;
}
