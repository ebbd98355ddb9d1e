/**
 * An html page's main content, title and metadata: the page parsed within a depth, cleaned around
 * Readability (or cut to the caller's selectors), and written in the format asked for. The steps
 * are STAGES (stages.ts), in the order they run; the rules they run are listed in rules.ts.
 */
import { withDescription, boundedText, FIELD_BYTES } from './metadata';
import type { Extraction, ExtractOptions } from './extraction';
import { parseFragment, parseWithinDepth } from './parse';
import { ALL_RULES } from './rules';
import { SelectorRun } from './selector-run';
import { STAGES, type Work } from './stages';
import { writeEach, type Format } from './write';

export type { Extraction, ExtractOptions, Format };
export { parseWithinDepth };

/** Main content of an html page, as markdown, text or cleaned html, with its title and metadata. */
export function extractHtml(
  page: string,
  baseUrl: string,
  format: Format,
  opts: ExtractOptions = {},
): Extraction {
  const w = { page, baseUrl, opts, rules: opts.rules ?? ALL_RULES, selectors: new SelectorRun() } as Work;
  for (const stage of STAGES) {
    if (w.picked) break;
    stage(w);
  }
  return written(w, format);
}

/** The content written in each format asked for, with its title, metadata and links. */
function written(w: Work, format: Format): Extraction {
  const root = w.root!;
  // Read before writing, which rewrites formulas.
  const described = withDescription(w.metadata, root as unknown as Element);
  const found = w.links;
  const links = found ? { links: found.links, ...(found.truncated ? { linksTruncated: true } : {}) } : {};
  // A title is held to a metadata field's bound: a page's <title> may be megabytes.
  const title = boundedText(w.title, FIELD_BYTES) ?? '';
  const contents = writeEach(root, [...new Set<Format>([format, ...(w.opts.formats ?? []), 'html'])]);
  return {
    title,
    content: contents[format]!,
    contents,
    metadata: described,
    ...links,
    ...(w.picked ? { pageText: w.pageText } : {}),
  };
}

/**
 * Cached article html (an Extraction's `contents.html`) written again in other formats, as
 * extractHtml would have written them: the page is not fetched or searched again.
 */
export function writeArticle(html: string, formats: Format[]): Partial<Record<Format, string>> {
  return writeEach(parseFragment(html).body as unknown as HTMLElement, formats);
}
