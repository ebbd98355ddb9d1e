/**
 * After Readability: where the article ends. A heading in its second half that announces other
 * content ("Related stories", "Sign up", "12 comments") goes, with all that follows it.
 */
import { textLen, under } from './dom-measure';

/**
 * What a heading that ends the article says: what follows is other pages' teasers, a sign-up or
 * readers' comments. Each entry is one alternative of the pattern, matched against the whole
 * heading (any case). An entry that ends in `\b.*` may go on with a subject ("Read more on …");
 * ARTICLE_END_PHRASE below is the same list without those tails.
 */
const ARTICLE_END_HEADINGS = [
  // Teasers of other pages.
  String.raw`related(\s+(articles?|stories|posts?|content|coverage|reading|topics|news|links|videos))?`,
  String.raw`recommended(\s+(for you|stories|articles|reading|videos))?`,
  String.raw`more\s+(from|on|in|stories|articles|news|like this|to read|to explore)\b.*`,
  String.raw`read\s+(more|next|also)\b.*`,
  String.raw`you\s+(may|might)\s+(also\s+)?(like|enjoy|be interested in)\b.*`,
  String.raw`(most\s+)?(popular|read|viewed|shared)(\s+(now|stories|articles|today))?`,
  String.raw`trending(\s+now)?`,
  'top stories',
  String.raw`also\s+(read|on|see)\b.*`,
  'what to read next',
  'up next',
  String.raw`next\s+(story|article|up)`,
  // A sign-up.
  String.raw`sign up\b.*`,
  String.raw`subscribe\b.*`,
  String.raw`(our|get the|the)?\s*newsletters?\b.*`,
  // More teasers.
  String.raw`don'?t miss\b.*`,
  String.raw`latest\s+(news|stories|articles|posts)`,
  // Readers' comments.
  String.raw`(\d+\s+)?comments?(\s*\(\d+\))?`,
  String.raw`\d+\s+(responses?|replies|thoughts)\b.*`,
  'discussion',
  'join the (conversation|discussion)',
  'leave a (reply|comment)',
  '(post|add|write) a comment',
  'reader comments',
  'have your say',
  // A sign-up for a newsletter ("Get our morning briefing").
  String.raw`get (our|the)\b.*\b(emails?|newsletters?|briefing)`, // The same in other languages: German, French, Spanish, Italian, Portuguese, Dutch, Polish.
  String.raw`(\d+\s+)?(kommentare?|commentaires?|comentarios?|commenti|comentários|reacties|komentarze?)(\s*\(\d+\))?`,
  '(schreibe|hinterlasse) einen kommentar|kommentar (schreiben|verfassen|abgeben)|kommentieren',
  'laisser un commentaire|(deja|dejar) un comentario|lascia un commento|deixe um comentário|reageer|réagir',
  String.raw`(ähnliche|verwandte|weitere|passende)\s+(artikel|beiträge|themen|nachrichten|meldungen)`,
  String.raw`mehr\s+zum\s+thema\b.*`,
  String.raw`(das|dieses)( thema)? könnte (sie|dich) auch interessieren`,
  String.raw`zum weiterlesen|schon gelesen\??|neueste (artikel|beiträge|nachrichten)`,
  String.raw`(mehr zu|noch mehr|auch auf)\b.*`,
  String.raw`(lesen sie|lies) (auch|mehr)\b.*`,
  String.raw`auch interessant|meistgelesen(e artikel)?|beliebte (artikel|beiträge)`,
  String.raw`(à|a) lire (aussi|également)|lire aussi|sur le même (sujet|thème)|articles? (similaires|liés)`,
  String.raw`les plus lus|vous aimerez aussi|dans la même rubrique`,
  String.raw`(noticias|artículos|notas) relacionad[oa]s|te puede interesar|lo más leído|lee también|más noticias`,
  String.raw`articoli correlati|leggi anche|potrebbe interessarti|i più letti`,
  String.raw`(notícias|artigos) relacionad[oa]s|leia também|mais lidas`,
  String.raw`lees ook|gerelateerde artikelen|meer nieuws`,
  String.raw`czytaj (także|też|również)|zobacz (także|też|również)|podobne artykuły|najczęściej czytane`,
];

/** The whole heading is one of ARTICLE_END_HEADINGS, then perhaps spaces and punctuation. */
const ARTICLE_END = new RegExp(String.raw`^(${ARTICLE_END_HEADINGS.join('|')})[\s:.!]*$`, 'i');

/** The same words as a whole heading, with no subject after them ("Read more", not "Read more on …"). */
const ARTICLE_END_PHRASE = new RegExp(ARTICLE_END.source.replaceAll('\\b.*', ''), 'i');

/**
 * The article's end: a heading that announces other content (see ARTICLE_END) goes, with all that
 * follows it inside its parent, and so on up to the article's root.
 */
export function cutAtArticleEnd(body: Element): void {
  for (const h of Array.from(body.querySelectorAll<Element>('h2,h3,h4,h5,h6'))) {
    if (!under(h, body)) continue;
    const text = (h.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (text.length === 0 || text.length > 60 || !ARTICLE_END.test(text)) continue;
    // Only in the article's second half: a heading near the top is the article's own.
    if (textBefore(h, body) < textLen(body) / 2) continue;
    const after: Element[] = [];
    for (let n: Element | null = h; n && n !== body; n = n.parentElement) {
      for (let x = n.nextElementSibling; x; x = x.nextElementSibling) after.push(x);
    }
    // A heading that only begins like an ending ("More on the vote") may be a section of the
    // article: it ends it only when what follows is little text or mostly links.
    if (!ARTICLE_END_PHRASE.test(text)) {
      let chars = 0;
      let linked = 0;
      for (const x of after) {
        chars += textLen(x);
        for (const a of Array.from(x.querySelectorAll('a'))) linked += textLen(a);
        if (x.localName === 'a') linked += textLen(x);
      }
      if (chars >= 200 && linked < chars / 2) continue;
    }
    for (const x of after) x.remove();
    h.remove();
    return;
  }
}

/** Characters of text in `root` before `el`. */
function textBefore(el: Element, root: Element): number {
  let n = 0;
  const walk = (node: Node): boolean => {
    if (node === el) return true;
    if (node.nodeType === 3) n += (node.textContent ?? '').trim().length;
    for (const c of Array.from(node.childNodes)) if (walk(c)) return true;
    return false;
  };
  walk(root);
  return n;
}
