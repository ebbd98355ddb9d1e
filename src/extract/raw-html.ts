/**
 * Reads of a page's raw html for the verdict rules, which run on the main thread: each finds what
 * a plain pattern (given beside it) would find, going once over the text, however broken the
 * markup. The patterns themselves backtrack over an unclosed tag: 24 KiB of `<div id="root" `
 * repeated took `/<div[^>]+id="root"[^>]*>\s*<\/div>/` 15 s, and twice that 197 s, while sift
 * answered no one.
 */

/**
 * Each `<name` (any case) from `from` on, with the first '>' after it: the tag as `/<name[^>]*>/i`
 * reads it. Called with `from` never going back; the '>' is looked for again only once passed.
 */
function tagReader(html: string, name: string): (from: number) => [number, number] | undefined {
  const start = new RegExp(`<${name}`, 'gi');
  let gt = -1;
  return (from) => {
    start.lastIndex = from;
    const m = start.exec(html);
    if (!m || gt === Infinity) return undefined;
    if (gt <= m.index) {
      gt = html.indexOf('>', m.index + 1);
      if (gt < 0) gt = Infinity; // no tag can end from here on
    }
    return gt === Infinity ? undefined : [m.index, gt];
  };
}

/**
 * The text with each tag replaced by a space, as `s.replace(/<[^>]*>/g, ' ')` gives it, cut once
 * it has `max` characters.
 */
export function stripTags(s: string, max = Infinity): string {
  let out = '';
  let i = 0;
  while (out.length < max) {
    const lt = s.indexOf('<', i);
    const gt = lt < 0 ? -1 : s.indexOf('>', lt + 1);
    if (gt < 0) {
      out += s.slice(i);
      break;
    }
    out += `${s.slice(i, lt)} `;
    i = gt + 1;
  }
  return out.length > max ? out.slice(0, max) : out;
}

/**
 * The inner html of each element `name`, in order, at most `limit` of them: what
 * `/<name[^>]*>([\s\S]{0,maxInner}?)<\/name>/gi` finds. The next end tag is looked for only once
 * the scan has passed the last one found, so no stretch of the page is searched twice.
 */
export function elementTexts(html: string, name: string, maxInner: number, limit = Infinity): string[] {
  const out: string[] = [];
  const next = tagReader(html, name);
  const endTag = new RegExp(`</${name}>`, 'gi');
  let closeAt = -1;
  for (let from = 0; out.length < limit;) {
    const tag = next(from);
    if (!tag) break;
    const inner = tag[1] + 1;
    if (closeAt < inner) {
      endTag.lastIndex = inner;
      closeAt = endTag.exec(html)?.index ?? Infinity;
    }
    if (closeAt === Infinity) break;
    if (closeAt - inner <= maxInner) {
      out.push(html.slice(inner, closeAt));
      from = closeAt + name.length + 3;
    } else {
      from = tag[0] + 1;
    }
  }
  return out;
}

const ROOT_ID = /id=["'](?:root|app|__next|__nuxt|svelte|main-app)["']/gi;
const EMPTY_DIV_END = /\s*<\/div>/iy;
const SHORT_APP_ROOT = /[^<]{0,40}<\/app-root>/iy;

/**
 * Whether the page has the mount point of a script framework with nothing in it: what
 * `/<div[^>]+id=["'](root|app|__next|__nuxt|svelte|main-app)["'][^>]*>\s*<\/div>|<app-root[^>]*>[^<]{0,40}<\/app-root>/i`
 * finds. Every `<div` before the same '>' shares that tag's end, so the tag is read once: for the
 * last id in it, and for what follows it.
 */
export function hasAppRoot(html: string): boolean {
  const divs = tagReader(html, 'div');
  let gt = -1;
  let lastId = -1;
  let emptyAfter = false;
  for (let from = 0; ; from++) {
    const tag = divs(from);
    if (!tag) break;
    const [lt] = tag;
    from = lt;
    if (tag[1] !== gt) {
      gt = tag[1];
      lastId = -1;
      ROOT_ID.lastIndex = 0;
      const inside = html.slice(lt + 5, gt);
      for (let m = ROOT_ID.exec(inside); m; m = ROOT_ID.exec(inside)) lastId = lt + 5 + m.index;
      EMPTY_DIV_END.lastIndex = gt + 1;
      emptyAfter = EMPTY_DIV_END.test(html);
    }
    if (emptyAfter && lastId >= lt + 5) return true;
  }
  const roots = tagReader(html, 'app-root');
  gt = -1;
  for (let from = 0; ; from++) {
    const tag = roots(from);
    if (!tag) return false;
    from = tag[0];
    if (tag[1] === gt) continue;
    gt = tag[1];
    SHORT_APP_ROOT.lastIndex = gt + 1;
    if (SHORT_APP_ROOT.test(html)) return true;
  }
}

/** Elements whose content a reader never sees as text. */
const UNSEEN = /<(script|style|noscript|template|svg|textarea)\b/gi;
const CLOSERS: Record<string, RegExp> = {};

/**
 * The words a reader sees in the page's html, counted up to `max` (see `count`): tags are skipped
 * and so is the content of scripts, styles and other unseen elements. Each stretch of the page is
 * read once.
 */
export function seenWords(html: string, max: number, count: (text: string, max: number) => number): number {
  let n = 0;
  let i = 0;
  while (n < max && i < html.length) {
    UNSEEN.lastIndex = i;
    const open = UNSEEN.exec(html);
    n += count(html.slice(i, open ? open.index : html.length), max - n);
    if (!open) break;
    const closer = (CLOSERS[open[1].toLowerCase()] ??= new RegExp(`</${open[1]}`, 'gi'));
    closer.lastIndex = open.index + open[0].length;
    const close = closer.exec(html);
    if (!close) break;
    const gt = html.indexOf('>', close.index);
    i = gt < 0 ? html.length : gt + 1;
  }
  return n;
}
