/**
 * The cleaning that runs on the block Readability chose: the article cut at its end, and captions
 * (marked or beside an image), link lists, teaser grids and one-line furniture (ad labels, controls, stamps) removed.
 */
import { cutAtArticleEnd } from './article-end';
import { ALL_RULES, type CleanRules } from './clean';
import { classId, measure, under, type Lengths } from './dom-measure';
import { removeTeasers } from './teasers';

const REMOVE_ALWAYS =
  'script,style,noscript,template,iframe,form,button,figcaption,nav,aside,footer,[role="navigation"],[aria-hidden="true"]';

/** The whole text of a block that is page furniture: an ad label, a control, a gallery counter, a stamp. */
const UI_LINE =
  /^(advert(isement)?|sponsored( content)?|sign in|log in|close|caption|print|read more|continue reading|share( this)?( article| story| page)?|image \d+ of \/? ?\d+|\d+ of \d+|this slideshow requires javascript\.?|(published|posted|updated|last updated|first published)\s*:?\s*((on|at)\s+)?(\d|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s|\w+ ago\b|an? \w+ ago\b).{0,60})$/i;

/** The same in other languages: print and back controls, ad labels, dated stamps. */
const UI_LINE_OTHER =
  /^(drucken|artikel drucken|drukuj|imprimer|imprimir|stampa|zurück|retour|volver|indietro|wstecz|anzeige|werbung|publicité|publicidad|pubblicità|reklama|beitragsbild|schon gelesen\??|zum weiterlesen|weiterführende[rn]? links?|externer inhalt|valora esta noticia|(video )?verfügbar bis( zum)? \d.{0,20}|permalien.{0,80}|permalink.{0,80}|weiterlesen|(pour )?lire la suite|leer más|seguir leyendo|czytaj dalej|continua a leggere|((zuletzt )?(veröffentlicht|aktualisiert|erstellt|geändert)|stand|publié|mis à jour|publicado|actualizado|pubblicato|aggiornato|opublikowano|zaktualizowano|publikacja)\s*:?\s*((am|le|el|il|on)\s+)?(\d|\p{L}+,?\s+\d).{0,60})[\s:.]*$/iu;

/** A photo credit on a line of its own: "Foto: …", "Crédits photos : …", "… / Getty Images". */
const CREDIT =
  /^((fotos?|photos?|bild|bilder|beitragsbild|titelbild|crédits? photos?|credits?|image|imagen|foto ?credit)\s*:\s*.{1,60}|.{0,60}©\s*.{1,40}|.{0,40}\b(getty images|afp|reuters|dpa|ap photo|picture[- ]alliance|imago|shutterstock|istock(photo)?|epa|keystone)\b.{0,40})$/iu;

/** A line set in the text that points to another story: its label, then a colon. */
const SEE_ALSO =
  /^(read (more|also)|see also|also read|related|lee (también|más)|mira|mire|puedes ver|ver (también|más)|(à )?lire aussi|voir aussi|lesen sie (auch|mehr)|mehr dazu|auch interessant|czytaj (też|także|również)|zobacz (też|także|również)|dowiedz się (więcej|też)|leia (também|mais)|veja também|leggi anche|guarda anche)\s*:/iu;
const SEE_ALSO_TAGS = /^(P|DIV|LI|BLOCKQUOTE)$/;
/** A line that ends as a sentence does. */
const SENTENCE_ENDS = /[.!…]["'»”’)]*$/;

/**
 * A line that asks the reader to subscribe, download the site's app or follow it elsewhere: the
 * verb first ("Subscribe now to our e-edition for the full story."), or after "For the latest …",
 * and what it asks for (APPEAL_WHAT); a call to subscribe or follow in other languages alone.
 */
const APPEAL =
  /^((for (the )?(latest|more)\b[^.!?]{0,80}?\s)?(subscribe|sign up|download|get|follow|like) (now |today )?(to|for|on|the|our|us)\b|(jetzt )?laden sie (sich )?(jetzt )?(die|unsere)\b|téléchargez (l'|notre )|descarga (la|nuestra)\b)/iu;
/** An appeal's length at most: a sentence or two ("Follow us on … Send us a message on …"). */
const APPEAL_CHARS = 300;
const APPEAL_WHAT =
  /\b(apps?|newsletter|e-?edition|edition|subscription|full story|facebook|twitter|instagram|telegram|whatsapp|youtube|tiktok)\b/i;
/** The first words APPEAL and APPEAL_OTHER can begin with. */
const APPEAL_FIRST =
  /^\s*(for|subscribe|sign|download|get|follow|like|jetzt|laden|téléchargez|descarga|abonnieren|abonniere|folgen|folge|abonnez|suivez|suscríbete|síguenos)\b/iu;
const APPEAL_OTHER =
  /^(jetzt )?(abonnieren sie|abonniere|folgen sie uns|folge uns|abonnez-vous|suivez-nous|suscríbete|síguenos)\b/iu;

/** After Readability: drop captions, link lists and other short furniture from the chosen block. */
export function cleanArticle(body: Element, rules: CleanRules = ALL_RULES, pageUrl?: string): void {
  if (rules.articleEnd) cutAtArticleEnd(body);
  if (rules.textForms) unwrapTextForms(body);
  for (const el of Array.from(body.querySelectorAll<Element>(REMOVE_ALWAYS))) el.remove();
  // Every element's text and link-text length in one walk: measuring each element anew would read
  // its subtree once per ancestor. The decisions below remove subtrees only after their
  // ancestors were judged, so these lengths are the ones each check would have read.
  const lens = measure(body);
  if (rules.teasers && pageUrl) removeTeasers(body, lens, pageUrl);
  if (rules.imageCaptions) dropImageCaptions(body, lens);
  const BLOCK = /^(UL|OL|DIV|SECTION|P|TABLE)$/;
  const LINE = /^(P|DIV|SPAN|LI|H2|H3|H4|H5|H6)$/;
  for (const el of Array.from(
    body.querySelectorAll<Element>('ul,ol,div,section,p,table,span,li,h2,h3,h4,h5,h6,blockquote'),
  )) {
    if (!under(el, body)) continue; // inside something removed already
    const m = lens.get(el);
    if (!m || m.text === 0) continue;
    // Mostly links: a menu, "related stories" or a tag list.
    const most = rules.linkSentences && el.tagName === 'P' ? 0.8 : 0.6;
    if (BLOCK.test(el.tagName) && m.link / m.text > most && m.text < 1000) {
      el.remove();
      continue;
    }
    // A line that is only an ad label, a control or a stamp (a block of blocks is judged by them).
    if (rules.uiLines && LINE.test(el.tagName) && m.text <= 80 && !m.blocks) {
      const line = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      if (UI_LINE.test(line) || UI_LINE_OTHER.test(line) || CREDIT.test(line)) {
        el.remove();
        continue;
      }
    }
    // "Read also: <another story>" set in the text, in any of several languages: mostly a link, or
    // a headline (no full stop at its end) when the link is elsewhere. A sentence stays.
    if (rules.uiLines && SEE_ALSO_TAGS.test(el.tagName) && m.text <= 200 && !m.blocks) {
      const line = (el.textContent ?? '').trim();
      if (SEE_ALSO.test(line) && (m.link * 2 >= m.text || !SENTENCE_ENDS.test(line))) {
        el.remove();
        continue;
      }
    }
    if (rules.uiLines && LINE.test(el.tagName) && m.text <= APPEAL_CHARS && !m.blocks) {
      // Its first word first: reading the text of every line of an article costs a tenth of its cleaning.
      if (!APPEAL_FIRST.test(firstText(el))) continue;
      const line = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      if ((APPEAL.test(line) && APPEAL_WHAT.test(line)) || APPEAL_OTHER.test(line)) {
        el.remove();
      }
    }
  }
}

/** The first text under `el` that is not white space ('' when none). */
function firstText(el: Element): string {
  for (let n: Node | null = el.firstChild; n && n !== el;) {
    if (n.nodeType === 3 && (n as Text).data.trim()) return (n as Text).data;
    if (n.firstChild) n = n.firstChild;
    else {
      while (n && n !== el && !n.nextSibling) n = n.parentNode;
      n = n && n !== el ? n.nextSibling : null;
    }
  }
  return '';
}

/** The most text an image's own block holds for it to be the image's caption. */
const CAPTION_CHARS = 150;
/** Images that sit in a line of text, not above a caption: emoji, icons, smileys. */
const INLINE_IMAGE = /emoji|smiley|icon/i;
/** An image narrower or shorter than this (by its attributes) sits in a line of text. */
const INLINE_PX = 100;

/**
 * An image's own block (its nearest p or div, holding no p, div or li) with 150 characters of text
 * or less keeps its images and loses the text: a caption or a credit not marked as one.
 */
function dropImageCaptions(body: Element, lens: Map<Element, Lengths>): void {
  for (const img of Array.from(body.querySelectorAll<Element>('img'))) {
    if (INLINE_IMAGE.test(classId(img)) || smallerThan(img, INLINE_PX)) continue;
    const block = img.parentElement?.closest('p,div');
    if (!block || block === body || !under(block, body)) continue;
    const m = lens.get(block);
    if (!m || m.text === 0 || m.blocks || m.text > CAPTION_CHARS) continue;
    block.replaceChildren(...Array.from(block.querySelectorAll('img')));
    m.text = 0; // judged once: its other images pass it by
  }
}

function smallerThan(img: Element, px: number): boolean {
  return ['width', 'height'].some((a) => {
    const v = Number.parseInt(img.getAttribute(a) ?? '', 10);
    return Number.isFinite(v) && v < px;
  });
}

/** A form with at least this many characters of text besides its controls holds content. */
const FORM_TEXT = 200;
const CONTROLS = 'input,select,textarea,button,option,label';

/** Each form holding text gives way to its content, its controls removed (see CleanRules.textForms). */
function unwrapTextForms(body: Element): void {
  for (const form of Array.from(body.querySelectorAll<Element>('form')).reverse()) {
    const controls = Array.from(form.querySelectorAll<Element>(CONTROLS));
    const controlText = controls.reduce((n, c) => n + (c.textContent ?? '').length, 0);
    const text = (form.textContent ?? '').replace(/\s+/g, ' ').length - controlText;
    if (text < FORM_TEXT) continue;
    for (const c of controls) c.remove();
    form.replaceWith(...Array.from(form.childNodes));
  }
}
