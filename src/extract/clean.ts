/**
 * The cleaning rules around Readability, and the switches that turn them off one by one.
 * Readability finds the main block well but keeps what sits inside it: captions, photo credits,
 * "related" link lists, share bars, bylines. precleanSource (preclean.ts) runs before it, on the
 * page; cleanArticle (clean-article.ts) runs after it, on the block it chose.
 */

/** Rules that can be turned off one by one, to measure what each earns (test/support/corpus.ts). */
export interface CleanRules {
  /** The article ends at a "related", "recommended", "newsletter" or "read next" heading. */
  articleEnd?: boolean;
  /**
   * Lines that are only an ad label, a control's name, a posted/updated stamp or a photo credit go,
   * in English and other languages, and so do lines that point to another story ("Czytaj też:
   * <a>…</a>").
   */
  uiLines?: boolean;
  /** An embedded post's wrappers (named for its network) give way to its blockquote before Readability. */
  embeds?: boolean;
  /** A comment section goes before Readability, whatever its length. */
  comments?: boolean;
  /** Grids of teasers (blocks led by a heading that is all one link to another page of the site) go. */
  teasers?: boolean;
  /** A subheading loses its class before Readability, which drops an h2 whose class sounds like furniture. */
  headings?: boolean;
  /** A paragraph goes as a link list only past 80% link text, not 60%: a sentence around a link is text. */
  linkSentences?: boolean;
  /**
   * A block Readability chose that the cleaning leaves with under 50 words of its 50 or more (a
   * form, a link list emptied by the link-density rule) gives way to the whole page less its
   * furniture, when that holds more. An article short from the start stays as it is.
   */
  thinArticle?: boolean;
  /**
   * A form holding text (a shop's product form with its description) keeps the text: its controls
   * go and it gives way to what it holds, where another form goes whole.
   */
  textForms?: boolean;
  /**
   * The article the page states in its JSON-LD (`articleBody`) stands in for the one found in the
   * html when it has over twice the words (and at least 50).
   */
  statedBody?: boolean;
  /**
   * A page of posts (a forum thread: the first post-length block named or built as a comment
   * follows the page's heading with no article between them) keeps its comments, named as they
   * are, for Readability to judge by their text.
   */
  threads?: boolean;
  /**
   * The ingredients and steps of the recipe (or the supplies and steps of the how-to) the page
   * states in its JSON-LD are added to the article when it lacks most of them.
   */
  statedRecipe?: boolean;
  /**
   * A `<noscript>` or a `<script type="text/template">` that is the only text of its block and holds
   * 50 words or more is put in the page in its place (an article written by a script).
   */
  scriptText?: boolean;
  /**
   * The blocks that hold the page's heading lose the names or role that Readability drops as
   * unlikely ("footer", "social", a dialog's role), with all they hold.
   */
  headingPath?: boolean;
  /**
   * The prose of the state a page's scripts render from (`__NEXT_DATA__`, `window.__INITIAL_STATE__`)
   * stands in for the html's article as a JSON-LD `articleBody` does (see statedBody).
   */
  scriptState?: boolean;
  /**
   * A short block (under 1,000 characters) hidden by its class until a script shows it (a "story
   * developing" notice, a popup, a banner) goes before Readability, as furniture named so does.
   */
  hiddenNotices?: boolean;
  /**
   * An image's own block (a p or div with no block inside) keeps the image and loses its text when
   * that is 150 characters or less: a caption or credit not marked as one ("Abbildung 4: …").
   */
  imageCaptions?: boolean;
  /**
   * A class word that hides something other than its element on a desktop screen (a field's label:
   * `field--label-hidden`; overflow: `overflow-hidden`; small screens or print: `hidden-xs`,
   * `hidden-print`; an image until it loads: `lazy-hidden`) is dropped before Readability, which
   * counts "hidden" anywhere in a class against the element and all it holds.
   */
  hiddenParts?: boolean;
  /**
   * The lead beside the page's heading (a block within a few lines of it that says what the page's
   * description says) is put first in the article when Readability left it out with the header.
   */
  lead?: boolean;
  /** A dialog (a block named modal, popup or lightbox) goes before Readability, whatever its length, unless it holds the page's heading. */
  dialogs?: boolean;
  /**
   * A table cell that holds no sentence (a list of names, addresses or figures) does not score as
   * text in Readability: a table of 600 addresses outscored the article beside it.
   */
  listCells?: boolean;
  /** A single line break between two long runs of text ends a paragraph, as two in a row do for Readability. */
  lineParagraphs?: boolean;
  /**
   * Paragraphs of prose between the page's heading and the block Readability chose (the article's
   * opening in a block of its own) are put first in the article.
   */
  opening?: boolean;
  /** Other stories beside the one the page's title names (a stream of articles) go before Readability. */
  stories?: boolean;
  /** A sign-up box (the short block around an email field) goes with its pitch. */
  signups?: boolean;
  /** A div around a single paragraph is replaced by the paragraph before Readability. */
  wrappedParagraphs?: boolean;
  /** A formula and its wrappers lose class and style: a renderer's names ("CtxtMenu") read as furniture, and a formula drawn as an image hides its MathML. */
  math?: boolean;
}

export const ALL_RULES: Required<CleanRules> = {
  hiddenParts: true,
  lead: true,
  dialogs: true,
  listCells: true,
  lineParagraphs: true,
  opening: true,
  imageCaptions: true,
  thinArticle: true,
  threads: true,
  statedBody: true,
  hiddenNotices: true,
  scriptState: true,
  headingPath: true,
  scriptText: true,
  statedRecipe: true,
  textForms: true,
  articleEnd: true,
  uiLines: true,
  embeds: true,
  comments: true,
  teasers: true,
  headings: true,
  linkSentences: true,
  stories: true,
  signups: true,
  wrappedParagraphs: true,
  math: true,
};
