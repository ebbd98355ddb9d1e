/**
 * A page's JSON-LD: every object its ld+json scripts hold, and the names and URLs in their values.
 */
import { stated } from './stated-text';

export type Json = Record<string, unknown>;

/** Every JSON-LD object of the page, @graph members included. */
export function jsonLd(scripts: Element[]): Json[] {
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

/** The object's @type, a list of them joined by spaces. */
export function typeOf(o: Json): string {
  const t = o['@type'];
  return Array.isArray(t) ? t.join(' ') : typeof t === 'string' ? t : '';
}

/** A name from a string, a {name} object, or a list of them. */
export function names(v: unknown): string | null {
  if (typeof v === 'string') return stated(v);
  if (Array.isArray(v)) {
    const all = v.map(names).filter((x): x is string => !!x);
    return all.length > 0 ? all.join(', ') : null;
  }
  if (v && typeof v === 'object') return names((v as Json).name);
  return null;
}

/** A URL from a string, a {url} or {@id} object, or the first of a list. */
export function url(v: unknown): string | null {
  if (typeof v === 'string') return stated(v);
  if (Array.isArray(v)) return url(v[0]);
  if (v && typeof v === 'object') return url((v as Json).url ?? (v as Json)['@id']);
  return null;
}
