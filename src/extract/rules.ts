/**
 * Extraction's rules around Readability, one entry each, in the order they run: its name is its
 * switch (`rules: { math: false }` turns it off, to measure what it earns: bench/quality and the
 * corpus suite measure every rule listed here), its stage is the step of extractHtml that runs it
 * (see STAGES in extract.ts), and the words it looks for are in vocabulary.ts. Readability finds
 * the main block well but keeps what sits inside it (captions, photo credits, "related" link
 * lists, share bars, bylines) and misjudges some pages' shapes; these put that right.
 */

/**
 * Where a rule runs: on the page before Readability (preclean.ts), in Readability's scoring
 * (tuning/readability.ts), on the block it chose (clean-article.ts), in choosing what stands for
 * the article, or completing it (extract.ts).
 */
export type Stage = 'preclean' | 'readability' | 'clean' | 'choose' | 'complete';

export const RULES = {
  /**
   * A `<noscript>` or a `<script type="text/template">` that is the only text of its block and holds
   * 50 words or more is put in the page in its place (an article written by a script); and a page
   * that is a script's shell (under 100 words shown) is its largest `<noscript>`, when that holds
   * four times those words (a forum's thread for readers without scripts).
   */
  scriptText: 'preclean',
  /**
   * Other stories beside the one the page's title names (a stream of articles) go before Readability;
   * not when that story's heading is an h2 or h3 under an article's h1: they are its sections.
   */
  stories: 'preclean',
  /**
   * The blocks that hold the page's heading lose the names or role that Readability drops as
   * unlikely ("footer", "social", a dialog's role), with all they hold.
   */
  headingPath: 'preclean',
  /**
   * A block that holds half the page's text or more loses the names for which Readability drops it
   * as unlikely: a frame named `with_header` is the page, not its header.
   */
  frames: 'preclean',
  /** An embedded post's wrappers (named for its network) give way to its blockquote before Readability. */
  embeds: 'preclean',
  /** A formula and its wrappers lose class and style: a renderer's names ("CtxtMenu") read as furniture, and a formula drawn as an image hides its MathML. */
  math: 'preclean',
  /**
   * A page of posts (a forum thread: the first post-length block named or built as a comment
   * follows the page's heading with no article between them, or a post-length block after the
   * heading is built as the comments marked up after it are, or its JSON-LD or the microdata around
   * its heading says DiscussionForumPosting or QAPage) keeps its comments, named as they are, for
   * Readability to judge by their text.
   */
  threads: 'preclean',
  /**
   * A class word that hides something other than its element on a desktop screen (a field's label:
   * `field--label-hidden`; overflow: `overflow-hidden`; small screens or print: `hidden-xs`,
   * `mobile-hidden`; a shop's quick view: `quick-add-hidden`; an image until it loads:
   * `lazy-hidden`) is dropped before Readability, which
   * counts "hidden" anywhere in a class against the element and all it holds.
   */
  hiddenParts: 'preclean',
  /**
   * Short blocks named as furniture (`meta`, `tags`, `credit`…) stay when four or more of one tag
   * and class hold 40 % of the page's text between them: a list's items, each a `meta` block with
   * its title, authors and subjects, not one byline.
   */
  furnitureRuns: 'preclean',
  /** A comment section goes before Readability, whatever its length. */
  comments: 'preclean',
  /**
   * On a page that states it is a product (JSON-LD or `og:type`, and no article), its customers'
   * reviews go before Readability, whatever their length: a shop's page is its product, as a post
   * is not its comments.
   */
  reviews: 'preclean',
  /** A subheading loses its class before Readability, which drops an h2 whose class sounds like furniture. */
  headings: 'preclean',
  /**
   * A dialog (a block named modal, popup, lightbox or consent) goes before Readability, whatever its
   * length, unless it holds the page's heading.
   */
  dialogs: 'preclean',
  /**
   * A short block (under 1,000 characters) hidden by its class until a script shows it (a "story
   * developing" notice, a popup, a banner) goes before Readability, as furniture named so does.
   */
  hiddenNotices: 'preclean',
  /** A div around a single paragraph is replaced by the paragraph before Readability. */
  wrappedParagraphs: 'preclean',
  /** A single line break between two long runs of text ends a paragraph, as two in a row do for Readability. */
  lineParagraphs: 'preclean',
  /** A sign-up box (the short block around an email field) goes with its pitch. */
  signups: 'preclean',
  /**
   * A table cell that holds no sentence (a list of names, addresses or figures) does not score as
   * text in Readability: a table of 600 addresses outscored the article beside it.
   */
  listCells: 'readability',
  /** The article ends at a "related", "recommended", "newsletter" or "read next" heading. */
  articleEnd: 'clean',
  /**
   * A form holding text (a shop's product form with its description) keeps the text: its controls
   * go and it gives way to what it holds, where another form goes whole.
   */
  textForms: 'clean',
  /** Grids of teasers (blocks led by a heading that is all one link to another page of the site) go. */
  teasers: 'clean',
  /**
   * An image's own block (a p or div with no block inside) keeps the image and loses its text when
   * that is 150 characters or less: a caption or credit not marked as one ("Abbildung 4: …").
   */
  imageCaptions: 'clean',
  /** A paragraph goes as a link list only past 80% link text, not 60%: a sentence around a link is text. */
  linkSentences: 'clean',
  /**
   * Lines that are only an ad label, a control's name, a posted/updated stamp or a photo credit go,
   * in English and other languages, and so do lines that point to another story ("Czytaj też:
   * <a>…</a>").
   */
  uiLines: 'clean',
  /**
   * A block Readability chose that the cleaning leaves with under 50 words of its 50 or more (a
   * form, a link list emptied by the link-density rule) gives way to the whole page less its
   * furniture, when that holds more. One short from the start does too when the page holds four
   * times its words and 200 at least (a corner of a page of items); else it stays as it is.
   */
  thinArticle: 'choose',
  /**
   * On a page that states it is a product (JSON-LD or `og:type`, and no article), the page less its
   * furniture that stands in when Readability found no block or a thin one (see thinArticle) has the
   * cleaning of stage 'clean' too: a shop's grids of other products, its link lists and controls
   * go, as a page of one product is not a list.
   */
  productPage: 'choose',
  /**
   * A header inside an article is the article's own (its title and teaser), not the page's
   * furniture: the page less its furniture (see thinArticle, itemRuns) keeps it. A page of
   * stories, each an article whose title and teaser sit in its header, kept nothing.
   */
  articleParts: 'choose',
  /**
   * A thread's posts, as its microdata marks them (`itemprop="text"` in a DiscussionForumPosting,
   * a Question, an Answer, or a Comment on a page that says it is a thread), stand in for the
   * block Readability chose when they hold 90 % of its words or more: it keeps one post.
   */
  statedPosts: 'choose',
  /**
   * A page of items (a list of links, a table of jobs, a grid of products, a front page of
   * stories, a thread): the block holding its largest run of like items (elements of one shape,
   * see item-runs.ts), less its furniture but with its link lists and teasers, stands in for the
   * block Readability chose when it holds three times its words (eight on a page that states it is
   * an article): Readability scores paragraphs, and keeps one item of such a page, or a corner.
   */
  itemRuns: 'choose',
  /**
   * On a page that does not state it is an article (`og:type`, JSON-LD), its one `<main>` (or
   * `role="main"`), less its furniture and cleaned as the chosen block is (as a run's block, its
   * teasers kept, when that block held under 100 words and did not open with the page's title: a
   * corner of a grid of cards), stands in for that block when it holds half again its words (and 30
   * at least): a landing page, a service's page, a shop's, is a stack of short sections, and
   * Readability keeps one.
   */
  mainBlock: 'choose',
  /**
   * The article the page states in its JSON-LD (`articleBody`) stands in for the one found in the
   * html when it has over twice the words (and at least 50).
   */
  statedBody: 'choose',
  /**
   * The prose of the state a page's scripts render from (`__NEXT_DATA__`, `window.__INITIAL_STATE__`)
   * stands in for the html's article as a JSON-LD `articleBody` does (see statedBody).
   */
  scriptState: 'choose',
  /**
   * Paragraphs of prose between the page's heading and the block Readability chose (the article's
   * opening in a block of its own) are put first in the article.
   */
  opening: 'complete',
  /**
   * The lead beside the page's heading (a block within a few lines of it that says what the page's
   * description says) is put first in the article when Readability left it out with the header.
   */
  lead: 'complete',
  /**
   * The ingredients and steps of the recipe (or the supplies and steps of the how-to) the page
   * states in its JSON-LD are added to the article when it lacks most of them.
   */
  statedRecipe: 'complete',
  /**
   * Blocks that repeat the blocks just before them word for word (of one tag, 10 words or more)
   * go: a shop's variants each printing the same features, a carousel's clones, a section written
   * twice for two screen sizes. One paragraph said again stays: it may be meant.
   */
  repeats: 'complete',
} as const satisfies Record<string, Stage>;

export type RuleName = keyof typeof RULES;

/** The rules to run: a rule runs when its switch is true (ALL_RULES with some turned off). */
export type CleanRules = Partial<Record<RuleName, boolean>>;

/** Every rule on. */
export const ALL_RULES = Object.fromEntries(
  Object.keys(RULES).map((name) => [name, true]),
) as Required<CleanRules>;
