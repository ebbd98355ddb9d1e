/**
 * A lead (standfirst) set beside the page's heading, in the article's header: Readability judges
 * the header apart from the text below it and leaves it out. The page states its lead as its
 * description, so a block near the heading that says what the description says is the lead.
 */
import { firstWithin } from './dom-measure';

/** Seen text between the heading and its lead, at most: a date, a byline, a section's name. */
const BEFORE_LEAD_CHARS = 400;
/** A lead is a sentence or a few: shorter is a label, longer is the article itself. */
const MIN_CHARS = 40;
const MAX_CHARS = 1000;
/** Elements looked at after the heading, at most. */
const MAX_ELEMENTS = 200;

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const LEAD_TAGS = /^(p|div|span|h2|h3|strong|b|em)$/;
/**
 * A lead is written in sentences. A line with no full stop at its end is a second title, set as
 * a headline is ("Black Friday is Next Week, But Several Deals Go Live Today").
 */
const SENTENCE_END = /[.!?…。！？][\s"'»”’)\]]*$/;

/**
 * The text of the block that follows `heading` closely and says what `description` says (the same
 * text, or one the start of the other when a description is cut short), or undefined.
 */
export function leadOf(heading: Element | undefined, description: string | null): string | undefined {
  if (!heading || !description) return undefined;
  const stated = squash(description)
    .replace(/\s*(…|\.\.\.)$/, '')
    .toLowerCase();
  if (stated.length < MIN_CHARS) return undefined;
  let lead: string | undefined;
  let seen = 0;
  firstWithin(heading, BEFORE_LEAD_CHARS, (el) => {
    // A page of empty elements after its heading is not walked to its end.
    if (++seen > MAX_ELEMENTS) return true;
    if (!LEAD_TAGS.test(el.localName) || el.querySelector('p,div,li,h1,h2,h3')) return false;
    const text = squash(el.textContent ?? '');
    if (text.length < MIN_CHARS || text.length > MAX_CHARS || !SENTENCE_END.test(text)) return false;
    const t = text.toLowerCase();
    if (t === stated || t.startsWith(stated) || stated.startsWith(t)) lead = text;
    return lead !== undefined;
  });
  return lead;
}

/** Puts `lead` first in `root` when the article left it out. */
export function withLead(root: Element, lead: string): void {
  // Whole: an article may open with the lead's first sentence and go on differently.
  if (squash(root.textContent ?? '').includes(lead)) return;
  const p = root.ownerDocument.createElement('p');
  p.textContent = lead;
  root.insertBefore(p, root.firstChild);
}
