/**
 * The links of a page's content, bounded: a page of tens of thousands of relative links, made
 * absolute against a final URL a redirect chose, would otherwise answer megabytes per kilobyte.
 */
import { tidy } from './html-text';

export interface Link {
  url: string;
  text: string;
}

/** At most this many links are listed. */
export const MAX_LINKS = 1000;
/** A link's URL and text together are at most this many characters. */
export const MAX_LINK_CHARS = 2048;

/**
 * A page's links: absolute http(s) URLs with their text, each URL once, in document order,
 * at most MAX_LINKS of them. A URL over MAX_LINK_CHARS is left out (a cut URL is another URL); a
 * text is cut to what the URL leaves. `truncated`: something was left out or cut.
 */
export function linksOf(root: HTMLElement, baseUrl: string): { links: Link[]; truncated: boolean } {
  const seen = new Set<string>();
  const links: Link[] = [];
  let truncated = false;
  for (const a of Array.from(root.querySelectorAll('a[href]'))) {
    let u: URL;
    try {
      u = new URL(a.getAttribute('href') ?? '', baseUrl);
    } catch {
      continue;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || seen.has(u.href)) continue;
    if (u.href.length > MAX_LINK_CHARS || links.length === MAX_LINKS) {
      truncated = true;
      if (links.length === MAX_LINKS) break;
      continue;
    }
    seen.add(u.href);
    const room = MAX_LINK_CHARS - u.href.length;
    let text = tidy(a.textContent ?? '');
    if (text.length > room) {
      truncated = true;
      // Not between the two halves of a surrogate pair.
      text = text.slice(0, /[\uD800-\uDBFF]/.test(text[room - 1] ?? '') ? room - 1 : room);
    }
    links.push({ url: u.href, text });
  }
  return { links, truncated };
}
