/** What an extraction gives back, and what it is asked. */
import type { Link } from './links';
import type { Metadata } from './metadata';
import type { CleanRules } from './rules';
import type { Format } from './write';

export interface Extraction {
  title: string;
  /** The content in the format asked for. */
  content: string;
  /**
   * The content in that format, in each of `formats` and in html (the article's own elements,
   * from which every format can be written again: see writeArticle).
   */
  contents?: Partial<Record<Format, string>>;
  metadata: Metadata;
  /**
   * With `links`: the whole page's links (navigation and footer too) as it was fetched, absolute,
   * in document order (see links.ts).
   */
  links?: Link[];
  /** Some of the links were left out or cut at their bounds. */
  linksTruncated?: boolean;
  /**
   * With `include` selectors: the page's own text (its first VERDICT_READ_CHARS), which the
   * verdict judges: a short selection of a full page is not an empty page.
   */
  pageText?: string;
}

export interface ExtractOptions {
  /** List the whole page's links, read before anything is removed (a crawl follows them). */
  links?: boolean;
  /** CSS selectors: the content is what they match, in document order (Readability is not asked). */
  include?: string[];
  /** CSS selectors: what they match is removed before anything else. */
  exclude?: string[];
  /** Cleaning rules to run (all by default; turned off one by one only to measure them). */
  rules?: CleanRules;
  /** More formats to write the content in, beside the one asked for. */
  formats?: Format[];
}
