/** The elements the cleaning before Readability looks at, found in one walk over the page. */
import { isReplyControl } from './comments';
import { isTemplateScript } from './script-text';

/** What precleanSource looks at, found in one walk over the elements (in document order). */
export interface Survey {
  /** Elements with a class or an id. */
  named: Element[];
  headings: Element[];
  quotes: Element[];
  paragraphs: Element[];
  /** Line breaks. */
  breaks: Element[];
  emails: Element[];
  /** schema.org Comment items. */
  comments: Element[];
  /** Links, buttons and spans that say "Reply" or the like (see isReplyControl). */
  controls: Element[];
  /** MathML formulas. */
  formulas: Element[];
  /** `<noscript>` elements and scripts holding html templates. */
  scripts: Element[];
}

export function survey(doc: Document): Survey {
  const out: Survey = {
    named: [],
    headings: [],
    quotes: [],
    paragraphs: [],
    breaks: [],
    emails: [],
    comments: [],
    controls: [],
    formulas: [],
    scripts: [],
  };
  const root = doc.documentElement;
  let el: Element | null = root;
  while (el) {
    const name: string = el.localName;
    if (el.hasAttribute('class') || el.hasAttribute('id')) out.named.push(el);
    if (name === 'p') out.paragraphs.push(el);
    else if (name === 'br') out.breaks.push(el);
    else if (name === 'h1' || name === 'h2' || name === 'h3') out.headings.push(el);
    else if (name === 'blockquote') out.quotes.push(el);
    else if (name === 'math') out.formulas.push(el);
    else if (name === 'noscript' || (name === 'script' && isTemplateScript(el))) out.scripts.push(el);
    else if (name === 'input' && el.getAttribute('type')?.toLowerCase() === 'email') out.emails.push(el);
    else if (name === 'a' || name === 'button' || name === 'span') {
      if (isReplyControl(el)) out.controls.push(el);
    }
    if (/schema\.org\/comment/i.test(el.getAttribute('itemtype') ?? '')) out.comments.push(el);
    // Next in document order (a template's content is not searched).
    const child: Element | null = name === 'template' ? null : el.firstElementChild;
    if (child) {
      el = child;
      continue;
    }
    while (el && el !== root && !el.nextElementSibling) el = el.parentElement;
    el = el && el !== root ? el.nextElementSibling : null;
  }
  return out;
}
