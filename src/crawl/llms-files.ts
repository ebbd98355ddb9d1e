/**
 * What an llms.txt job writes from its pages (llmstxt.org): `llms.txt`, a `# ` title, a `> `
 * summary and `## ` sections of `- [title](url): description` lines, one section per folder of the
 * site; and `llms-full.txt`, the same head and then each page's markdown under its title and URL.
 */

/** A page as the files show it, from its result's envelope. */
export interface LlmsPage {
  url: string;
  title: string;
  description: string;
  markdown: string;
}

/** The site as the files name it: the seed page's title and description, or its host. */
export interface LlmsSite {
  title: string;
  summary: string;
  host: string;
}

/** Characters of a description kept on a page's line. */
const DESCRIPTION_CHARS = 300;
/** Where the pages of the site's root go. */
const ROOT_SECTION = 'Pages';

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function cut(s: string, n: number): string {
  if (s.length <= n) return s;
  // Never between the two halves of a character.
  const c = s.charCodeAt(n - 1);
  const head = s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
  const space = head.lastIndexOf(' ');
  return `${(space > n / 2 ? head.slice(0, space) : head).trimEnd()}…`;
}

/** A link's text as markdown reads it: brackets and backslashes escaped. */
const linkText = (s: string) => s.replace(/[\\[\]]/g, (c) => `\\${c}`);
/** A URL as a markdown link target: no paren or space left to end it early. */
const linkTarget = (u: string) =>
  u.replace(/[()\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/** The site of a job whose seed page is `seed` (absent when it was not read). */
export function llmsSiteOf(seedUrl: string, seed?: LlmsPage): LlmsSite {
  const host = new URL(seedUrl).host;
  return {
    host,
    title: oneLine(seed?.title ?? '') || host,
    summary: oneLine(seed?.description ?? ''),
  };
}

/** The head both files start with. */
export function llmsHead(site: LlmsSite): string {
  const summary = site.summary || `The pages of ${site.host}.`;
  return `# ${oneLine(site.title)}\n\n> ${cut(oneLine(summary), DESCRIPTION_CHARS)}\n`;
}

/**
 * The section a page is listed in: its folder's name (`/docs/guide` → Docs), the site's root
 * pages under "Pages", and another host's pages (a crawl's subdomains or external links) under
 * that host.
 */
export function sectionOf(url: string, host: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return ROOT_SECTION;
  }
  if (u.host !== host && u.host !== `www.${host}` && `www.${u.host}` !== host) return u.host;
  const parts = u.pathname.split('/').filter(Boolean);
  if (parts.length < 2) return ROOT_SECTION;
  let name = parts[0];
  try {
    name = decodeURIComponent(name);
  } catch {
    // Left as sent.
  }
  name = oneLine(name.replace(/[-_+.]+/g, ' '));
  return name ? name[0].toUpperCase() + name.slice(1) : ROOT_SECTION;
}

/** A page's line in llms.txt. */
export function llmsLine(p: LlmsPage): string {
  const title = linkText(oneLine(p.title) || p.url);
  const description = cut(oneLine(p.description), DESCRIPTION_CHARS);
  return `- [${title}](${linkTarget(p.url)})${description ? `: ${description}` : ''}`;
}

/** llms.txt: the head, then each section (in the order of its first page) with its pages' lines. */
export function llmsTxt(site: LlmsSite, pages: readonly LlmsPage[]): string {
  const sections = new Map<string, string[]>();
  for (const p of pages) {
    const name = sectionOf(p.url, site.host);
    let lines = sections.get(name);
    if (!lines) sections.set(name, (lines = []));
    lines.push(llmsLine(p));
  }
  let out = llmsHead(site);
  for (const [name, lines] of sections) out += `\n## ${name}\n\n${lines.join('\n')}\n`;
  return out;
}

/** A page in llms-full.txt: its title and URL, then its markdown (less a first heading that repeats the title). */
export function llmsFullPage(p: LlmsPage): string {
  const title = oneLine(p.title) || p.url;
  let body = p.markdown.replace(/^\s+/, '');
  const first = /^#\s+([^\n]*)\n?/.exec(body);
  if (first && oneLine(first[1]) === title) body = body.slice(first[0].length).replace(/^\s+/, '');
  return `\n# ${title}\n\nSource: ${p.url}\n\n${body.trimEnd()}\n`;
}
