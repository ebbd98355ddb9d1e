/**
 * A page's JSON-LD: every object its ld+json scripts hold, and the names and URLs in their values.
 */
import { stated } from './stated-text';

export type Json = Record<string, unknown>;

/** How deep JSON-LD is read: a value nested deeper is not read (a page may nest 100,000 deep). */
export const JSON_LD_DEPTH = 32;

/** Every JSON-LD object of the page, @graph members included. */
export function jsonLd(scripts: Element[]): Json[] {
  const out: Json[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > JSON_LD_DEPTH) return;
    if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v && typeof v === 'object') {
      out.push(v as Json);
      if (Array.isArray((v as Json)['@graph'])) walk((v as Json)['@graph'], depth + 1);
    }
  };
  for (const s of scripts) {
    try {
      // A script written for XHTML wraps its JSON in CDATA or a comment.
      walk(JSON.parse((s.textContent ?? '').replace(/^\s*(?:<!\[CDATA\[|<!--)|(?:\]\]>|-->)\s*$/g, '')), 0);
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

/** How many names of a list are read, and the length past which no more are added. */
export const MAX_NAMES = 100;
export const NAMES_CHARS = 2048;

/**
 * A name from a string, a {name} object, or a list of them (its first MAX_NAMES, joined, no more
 * added once NAMES_CHARS are reached: a page may list a million authors).
 */
export function names(v: unknown, depth = 0): string | null {
  if (depth > JSON_LD_DEPTH) return null;
  if (typeof v === 'string') return stated(v);
  if (Array.isArray(v)) {
    const all: string[] = [];
    let chars = 0;
    for (const x of v.slice(0, MAX_NAMES)) {
      const n = names(x, depth + 1);
      if (!n) continue;
      all.push(n);
      chars += n.length + 2;
      if (chars >= NAMES_CHARS) break;
    }
    return all.length > 0 ? all.join(', ') : null;
  }
  if (v && typeof v === 'object') return names((v as Json).name, depth + 1);
  return null;
}

/** A URL from a string, a {url} or {@id} object, or the first of a list. */
export function url(v: unknown, depth = 0): string | null {
  if (depth > JSON_LD_DEPTH) return null;
  if (typeof v === 'string') return stated(v);
  if (Array.isArray(v)) return url(v[0], depth + 1);
  if (v && typeof v === 'object') return url((v as Json).url ?? (v as Json)['@id'], depth + 1);
  return null;
}
