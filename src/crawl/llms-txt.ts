/**
 * A site's /llms.txt (llmstxt.org): a markdown file whose `[title](url)` links name the pages the
 * site wants read. Read as links only: its headings and notes are for people and models.
 */

/** Bytes of an llms.txt read; the rest is not looked at. */
export const LLMS_TXT_MAX_BYTES = 1024 * 1024;
/** Links taken from one llms.txt. */
export const LLMS_TXT_MAX_LINKS = 10_000;
/** A link's URL, made absolute, is kept up to this length (as a page's links are). */
const MAX_LINK_CHARS = 2048;

export interface LlmsTxtLink {
  url: string;
  /** The link's text. */
  title: string;
}

/**
 * A markdown link: a text with no bracket or line end, then a target with no paren or space
 * (`<…>` around it allowed). Each part stops at the first character it may not hold, so a hostile
 * file is read in time linear in its length.
 */
const LINK = /\[([^[\]\n]{0,1000})\]\(\s*<?([^()\s<>]{1,4096})>?(?:\s+"[^"\n]{0,500}")?\s*\)/g;

/** The http(s) links of an llms.txt, made absolute against where it was read, each URL once, in file order. */
export function llmsTxtLinks(text: string, base: string): LlmsTxtLink[] {
  const out: LlmsTxtLink[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(LINK)) {
    if (out.length >= LLMS_TXT_MAX_LINKS) break;
    if (m[2].length > MAX_LINK_CHARS) continue;
    let u: URL;
    try {
      u = new URL(m[2], base);
    } catch {
      continue;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    u.hash = '';
    if (u.href.length > MAX_LINK_CHARS) continue;
    if (seen.has(u.href)) continue;
    seen.add(u.href);
    out.push({ url: u.href, title: m[1].trim() });
  }
  return out;
}

/** Whether an answer is an llms.txt: a 200 that is not a web page (a site answering every path with its home page is not). */
export function isLlmsTxt(status: number, contentType: string): boolean {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return status === 200 && !/html|xml|json/.test(type) && (type === '' || type.startsWith('text/'));
}
