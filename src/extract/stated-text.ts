/**
 * A value a page states about itself (a meta content, a JSON-LD string, an attribute) read as
 * text: character references left in it decoded, whitespace collapsed, empty or overlong values
 * dropped.
 */

/** The value with whitespace runs as one space, trimmed; null when empty or over 2,000 characters. */
export function cleanText(s: string | null | undefined): string | null {
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
export function stated(s: string | null | undefined): string | null {
  return cleanText(s && unescapeRefs(s));
}

/**
 * A text the page states (a JSON-LD `articleBody`, a recipe step, a string of a script's state) as
 * its lines, whitespace collapsed, empty ones dropped. Written as html (`html`), its references are
 * decoded, its block tags are line breaks and its other tags go.
 */
export function statedLines(s: string, html = true): string[] {
  const text = html
    ? unescapeRefs(s)
        .replace(/<\/?(p|div|br|h[1-6]|li|blockquote)\b[^>]*>/gi, '\n')
        .replace(/<[^>]*>/g, '')
    : s;
  return text
    .split(/\n+/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length > 0);
}
