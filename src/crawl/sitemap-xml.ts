import type { Tokenizer } from 'htmlparser2';
import { MAX_SITEMAP_URL } from './sitemap-limits';

/** A `<loc>` as read: a page (in a `<url>`) or another sitemap file (in a `<sitemap>`). */
export interface Found {
  kind: 'entry' | 'sitemap';
  url: string;
}

/**
 * Whether `text` may be an absolute URL: it has a scheme, so a colon. A bomb's lines or `<loc>`s of
 * junk are dropped here, before they cost an object each and a URL parse that throws.
 */
export function couldBeUrl(text: string): boolean {
  return text.includes(':');
}

/**
 * Text kept from before the chunk being read, for a token that began there (a tag name, a CDATA
 * section, a `<` read as text): a `<loc>` longer than this is skipped anyway, so a token starting
 * further back is one sift never needs the text of, however long a hostile file makes it.
 */
const KEEP_CHARS = MAX_SITEMAP_URL + 2048;

/**
 * An XML sitemap or index read chunk by chunk, through htmlparser2's tokenizer in XML mode
 * (entities such as `&amp;` decoded): a `<loc>` directly inside a `<url>` is an entry, inside a
 * `<sitemap>` a file to read; each goes to `found` as it closes, so a cut file's last one is not
 * taken. Names are compared without a namespace prefix. The tokenizer, not htmlparser2's Parser,
 * because the Parser keeps its element stack with unshift, quadratic in a hostile file's depth,
 * and every chunk a token spans; here only a depth count and KEEP_CHARS of text are kept.
 */
export class SitemapXml {
  private readonly tokenizer: Tokenizer;
  /** The chunk being written, and where it starts in the file's text (the tokenizer's offsets). */
  private chunk = '';
  private chunkAt = 0;
  /** At most KEEP_CHARS of the text before `chunkAt`, and where that starts. */
  private before = '';
  private beforeAt = 0;

  private depth = 0;
  /** Depth of the open `<url>` or `<sitemap>`, and which; -1 outside them. */
  private itemDepth = -1;
  private item = '';
  private opening = '';
  /** The open `<loc>`'s text so far; `long` once past the longest URL (the rest is not kept). */
  private loc: string | undefined;
  private long = false;

  constructor(private readonly found: Found[]) {
    const noop = () => undefined;
    // Loaded on the first sitemap read: a server that never reads one never holds it.
    const { Tokenizer } = require('htmlparser2') as typeof import('htmlparser2');
    this.tokenizer = new Tokenizer(
      { xmlMode: true, decodeEntities: true },
      {
        onopentagname: (start, end) => (this.opening = this.name(start, end)),
        onopentagend: () => this.opened(),
        onclosetag: (start, end) => this.closed(this.name(start, end)),
        ontext: (start, end) => this.append(this.slice(start, end)),
        ontextentity: (codepoint) => this.append(String.fromCodePoint(codepoint)),
        oncdata: (start, end, endOffset) => this.append(this.slice(start, end - endOffset)),
        onselfclosingtag: noop,
        onattribdata: noop,
        onattribentity: noop,
        onattribend: noop,
        onattribname: noop,
        oncomment: noop,
        ondeclaration: noop,
        onprocessinginstruction: noop,
        onend: noop,
      },
    );
  }

  /** Reads the next text of the file (a BOM before the root is text outside any element). */
  write(text: string): void {
    if (!text) return;
    this.chunk = text;
    this.tokenizer.write(text);
    const kept =
      text.length >= KEEP_CHARS ? text.slice(-KEEP_CHARS) : (this.before + text).slice(-KEEP_CHARS);
    this.chunkAt += text.length;
    this.before = kept;
    this.beforeAt = this.chunkAt - kept.length;
    this.chunk = '';
  }

  /**
   * The text between two of the tokenizer's offsets (they count from the file's start), or
   * undefined when it began more than KEEP_CHARS before the chunk being read.
   */
  private slice(start: number, end: number): string | undefined {
    if (start >= this.chunkAt) return this.chunk.slice(start - this.chunkAt, end - this.chunkAt);
    if (start < this.beforeAt) return undefined;
    const head = this.before.slice(start - this.beforeAt, end - this.beforeAt);
    return end <= this.chunkAt ? head : head + this.chunk.slice(0, end - this.chunkAt);
  }

  private name(start: number, end: number): string {
    const n = (this.slice(start, end) ?? '').toLowerCase();
    return n.slice(n.indexOf(':') + 1);
  }

  private opened(): void {
    this.depth++;
    if (this.opening === 'url' || this.opening === 'sitemap') {
      this.itemDepth = this.depth;
      this.item = this.opening;
    } else if (this.opening === 'loc' && this.itemDepth >= 0 && this.depth === this.itemDepth + 1) {
      this.loc = '';
      this.long = false;
    }
  }

  private closed(name: string): void {
    if (name === 'loc' && this.loc !== undefined) {
      const value = this.long ? '' : this.loc.trim();
      this.loc = undefined;
      if (couldBeUrl(value))
        this.found.push({ kind: this.item === 'sitemap' ? 'sitemap' : 'entry', url: value });
    }
    if (this.depth === this.itemDepth) this.itemDepth = -1;
    this.depth = Math.max(0, this.depth - 1);
  }

  private append(s: string | undefined): void {
    if (this.loc === undefined || this.long) return;
    if (s === undefined) {
      this.long = true;
      return;
    }
    this.loc += s;
    this.long = this.loc.length > MAX_SITEMAP_URL + 256;
  }
}
