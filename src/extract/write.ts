/**
 * The cleaned article element written out as markdown, plain text or html, with each MathML
 * formula written as TeX or text first.
 */
import { convert } from '@kreuzberg/html-to-markdown-node';
import { htmlText } from './html-text';

export type Format = 'markdown' | 'text' | 'html';

// html-to-markdown (native): HTML to markdown (GFM tables, fenced code), from the cleaned html that
// every format serializes anyway; about six times faster than node-html-markdown, whose output
// building is quadratic in the page's length.
const MARKDOWN = {
  bullets: '-',
  escapeAsterisks: true,
  escapeUnderscores: true,
  compactTables: true,
  extractMetadata: false,
  preprocessing: { enabled: false },
  excludeSelectors: ['script', 'style', 'noscript', 'iframe', 'form', 'button', 'template'],
};

/**
 * The article element in each of `formats`, from the one tree. Writing formulas rewrites the tree
 * for the format at hand, so html is written first, and markdown from a copy when text follows.
 */
export function writeEach(body: HTMLElement, formats: readonly Format[]): Partial<Record<Format, string>> {
  const out: Partial<Record<Format, string>> = {};
  if (formats.includes('html')) out.html = write(body, 'html');
  const rest = (['markdown', 'text'] as const).filter((f) => formats.includes(f));
  rest.forEach((f, i) => {
    const last = i === rest.length - 1 || !body.querySelector('math');
    out[f] = write(last ? body : (body.cloneNode(true) as HTMLElement), f);
  });
  return out;
}

/** Soft hyphens: hints where a browser may break a word, never shown unless it does. */
const SOFT_HYPHENS = /\u00ad/g;

/**
 * Text as it is searched: without soft hyphens, and in Unicode's composed form (NFC), so that a
 * word split by a soft hyphen or spelled with a combining mark ("u" and U+0308 for "ü", as some
 * editors write it) is found by a search for it.
 */
const searchable = (text: string) => text.replace(SOFT_HYPHENS, '').normalize('NFC');

/**
 * The article element in `format`. Text and markdown are searchable (see searchable); html keeps
 * the page's characters, where soft hyphens stay invisible hints.
 */
export function write(body: HTMLElement, format: Format): string {
  if (format === 'html') return body.innerHTML.trim();
  const tex = writeFormulas(body, format);
  if (format === 'text') return searchable(htmlText(body as unknown as Parameters<typeof htmlText>[0]));
  const markdown = searchable((convert(collapseSpace(body.innerHTML), MARKDOWN).content ?? '').trim());
  return tex ? markdown.replace(tex.token, (t) => tex.written.get(t) ?? t) : markdown;
}

/** "{\displaystyle x}" is "x": the style is the renderer's choice. Other TeX is left as it is. */
function unstyled(tex: string): string {
  const m = /^\{\\(?:display|text)style\b\s*/.exec(tex);
  if (!m || !tex.endsWith('}')) return tex;
  // Only when the first brace is the one that closes last.
  let depth = 0;
  for (let i = 0; i < tex.length - 1; i++) {
    if (tex[i] === '\\') i++;
    else if (tex[i] === '{') depth++;
    else if (tex[i] === '}' && --depth === 0) return tex;
  }
  return tex.slice(m[0].length, -1).trim();
}

/** TeX, as pages give it beside a formula's MathML (KaTeX, MediaWiki): an annotation. */
const TEX = /^(application\/x-tex|tex)$/i;

/**
 * Each formula (`<math>`) becomes text, as a reader writes it: the TeX source when the page gives
 * it, else the formula's text (annotations left out: a browser does not show them). In markdown
 * TeX goes in `$…$`, `$$…$$` for a block, put in after the conversion through a token that the
 * converter leaves as it is (it would escape TeX's `_` and `\`). Returns the tokens, if any.
 */
function writeFormulas(
  body: HTMLElement,
  format: Format,
): { token: RegExp; written: Map<string, string> } | undefined {
  const formulas = Array.from(body.querySelectorAll('math'));
  if (formulas.length === 0) return undefined;
  const nonce = Math.random().toString(36).slice(2, 10);
  const written = new Map<string, string>();
  for (const math of formulas) {
    if (!body.contains(math)) continue; // inside a formula already written
    const notes = Array.from(math.querySelectorAll('annotation, annotation-xml'));
    const source = notes.find((a) => TEX.test(a.getAttribute('encoding') ?? ''));
    const tex = source && unstyled((source.textContent ?? '').replace(/\s+/g, ' ').trim());
    for (const a of notes) a.remove();
    let text = tex || (math.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (tex && format === 'markdown') {
      const token = `siftmath${nonce}n${written.size}z`;
      written.set(token, math.getAttribute('display') === 'block' ? `$$${tex}$$` : `$${tex}$`);
      text = token;
    }
    math.replaceWith(body.ownerDocument.createTextNode(text));
  }
  return written.size > 0 ? { token: new RegExp(`siftmath${nonce}n\\d+z`, 'g'), written } : undefined;
}

/**
 * Runs of whitespace outside <pre> become one space, as a browser shows them: the converter keeps
 * the source's line breaks inside a paragraph otherwise. (HTML's whitespace only: not U+00A0.)
 */
function collapseSpace(html: string): string {
  const collapse = (part: string) => part.replace(/[\t\n\f\r ]{2,}|[\t\n\f\r]/g, ' ');
  if (!/<pre\b/i.test(html)) return collapse(html);
  return html
    .split(/(<pre\b[\s\S]*?<\/pre>)/i)
    .map((part, i) => (i % 2 === 1 ? part : collapse(part)))
    .join('');
}
