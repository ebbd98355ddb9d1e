/**
 * The words extraction's rules look for, in one place: what a page writes (headings that end an
 * article, one-line furniture, photo credits, appeals, reply controls; English first, then the
 * other languages) and the names a page gives its parts (class and id words). Each list names the
 * rule that reads it (see rules.ts); a word or a language is added here and nowhere else.
 */

// What a page writes.

/**
 * Rule articleEnd: what a heading that ends the article says: what follows is other pages'
 * teasers, a sign-up or readers' comments. Each entry is one alternative of the pattern, matched
 * against the whole heading (any case). An entry that ends in `\b.*` may go on with a subject
 * ("Read more on …"); ARTICLE_END_PHRASE below is the same list without those tails.
 */
export const ARTICLE_END_HEADINGS = [
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
  // A shop's teasers of other products.
  String.raw`(related|similar)\s+(products|items)`,
  String.raw`(customers|people)\s+(also|who)\s+(bought|viewed|purchased|searched|liked)\b.*`,
  String.raw`recently\s+viewed(\s+(products|items))?`,
  'frequently bought together',
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
export const ARTICLE_END = new RegExp(String.raw`^(${ARTICLE_END_HEADINGS.join('|')})[\s:.!]*$`, 'i');

/** The same words as a whole heading, with no subject after them ("Read more", not "Read more on …"). */
export const ARTICLE_END_PHRASE = new RegExp(ARTICLE_END.source.replaceAll('\\b.*', ''), 'i');

/** Rule uiLines: the whole text of a block that is page furniture: an ad label, a control, a gallery counter, a stamp. */
export const UI_LINE =
  /^(advert(isement)?|sponsored( content)?|sign in|log in|close|caption|print|read more|continue reading|share( this)?( article| story| page)?|image \d+ of \/? ?\d+|\d+ of \d+|this slideshow requires javascript\.?|(published|posted|updated|last updated|first published)\s*:?\s*((on|at)\s+)?(\d|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s|\w+ ago\b|an? \w+ ago\b).{0,60})$/i;

/** Rule uiLines: the same in other languages: print and back controls, ad labels, dated stamps. */
export const UI_LINE_OTHER =
  /^(drucken|artikel drucken|drukuj|imprimer|imprimir|stampa|zurück|retour|volver|indietro|wstecz|anzeige|werbung|publicité|publicidad|pubblicità|reklama|beitragsbild|schon gelesen\??|zum weiterlesen|weiterführende[rn]? links?|externer inhalt|valora esta noticia|(video )?verfügbar bis( zum)? \d.{0,20}|permalien.{0,80}|permalink.{0,80}|weiterlesen|(pour )?lire la suite|leer más|seguir leyendo|czytaj dalej|continua a leggere|((zuletzt )?(veröffentlicht|aktualisiert|erstellt|geändert)|stand|publié|mis à jour|publicado|actualizado|pubblicato|aggiornato|opublikowano|zaktualizowano|publikacja)\s*:?\s*((am|le|el|il|on)\s+)?(\d|\p{L}+,?\s+\d).{0,60})[\s:.]*$/iu;

/** Rule uiLines: a photo credit on a line of its own: "Foto: …", "Crédits photos : …", "… / Getty Images". */
export const CREDIT =
  /^((fotos?|photos?|bild|bilder|beitragsbild|titelbild|crédits? photos?|credits?|image|imagen|foto ?credit)\s*:\s*.{1,60}|.{0,60}©\s*.{1,40}|.{0,40}\b(getty images|afp|reuters|dpa|ap photo|picture[- ]alliance|imago|shutterstock|istock(photo)?|epa|keystone)\b.{0,40})$/iu;

/** Rule uiLines: a line set in the text that points to another story: its label, then a colon. */
export const SEE_ALSO =
  /^(read (more|also)|see also|also read|related|lee (también|más)|mira|mire|puedes ver|ver (también|más)|(à )?lire aussi|voir aussi|lesen sie (auch|mehr)|mehr dazu|auch interessant|czytaj (też|także|również)|zobacz (też|także|również)|dowiedz się (więcej|też)|leia (também|mais)|veja também|leggi anche|guarda anche)\s*:/iu;

/**
 * Rule uiLines: a line that asks the reader to subscribe, download the site's app or follow it
 * elsewhere: the verb first ("Subscribe now to our e-edition for the full story."), or after "For
 * the latest …", and what it asks for (APPEAL_WHAT); a call to subscribe or follow in other
 * languages alone (APPEAL_OTHER).
 */
export const APPEAL =
  /^((for (the )?(latest|more)\b[^.!?]{0,80}?\s)?(subscribe|sign up|download|get|follow|like) (now |today )?(to|for|on|the|our|us)\b|(jetzt )?laden sie (sich )?(jetzt )?(die|unsere)\b|téléchargez (l'|notre )|descarga (la|nuestra)\b)/iu;
export const APPEAL_WHAT =
  /\b(apps?|newsletter|e-?edition|edition|subscription|full story|facebook|twitter|instagram|telegram|whatsapp|youtube|tiktok)\b/i;
/** The first words APPEAL and APPEAL_OTHER can begin with. */
export const APPEAL_FIRST =
  /^\s*(for|subscribe|sign|download|get|follow|like|jetzt|laden|téléchargez|descarga|abonnieren|abonniere|folgen|folge|abonnez|suivez|suscríbete|síguenos)\b/iu;
export const APPEAL_OTHER =
  /^(jetzt )?(abonnieren sie|abonniere|folgen sie uns|folge uns|abonnez-vous|suivez-nous|suscríbete|síguenos)\b/iu;

/**
 * Rule comments: what a control under a reader's comment says. Only a reply: "Report" or "Flag"
 * also label an article's own links ("report an error"), and two of those far apart would meet at
 * a block that holds the article.
 */
export const REPLY = /^(reply|respond|antworten|répondre|responder|rispondi|antwoorden|svara|odpowiedz)$/i;

// What a page names its parts: class and id words.

/** Always, before Readability: class or id words that mark page furniture rather than article text. */
export const FURNITURE =
  /(^|[-_\s])(caption|credit|byline|related|share|sharing|social|newsletter|promo|subscribe|subscription|advert|ads?|breadcrumbs?|tags?|author-bio|bio|timestamp|dateline|comments?|recommend(ed|ations)?|more-stories|read-more|also-like|outbrain|taboola|sidebar|signup|inline-cta|cta|disclaimer|copyright|meta|published|updated)([-_\s]|$)/i;

/** Rule comments: class or id words of a comment section (a list of readers' comments, a reply form). */
export const COMMENTS =
  /(^|[-_\s])(comments|comment-?(list|section|area|thread|threads|wrap|wrapper|container|block|holder|stream|form)|commentlist|disqus(_thread)?|discussion|replies|respond|reader-?comments)([-_\s]|$)/i;

/** Rule reviews: class or id words of a product's reviews section. */
export const REVIEWS =
  /(^|[-_\s])(reviews?|customer-reviews?|ratings?-and-reviews|pr-review-display)([-_\s]|$)/i;

/** Rule threads: names Readability takes for a comment: it drops an element so named, or marks it down. */
export const COMMENT_NAMED = /comment|discuss|repl(y|ies)/i;

/**
 * Rule hiddenNotices: a class that hides its element until a script shows it (a notice, a popup,
 * a banner): the whole word, so a class hiding it on one screen size only (`hidden-xs`,
 * `md:hidden`) does not count.
 */
export const HIDDEN = /(^|\s)(!?hidden|d-none|is-hidden|hide|display-none)(\s|$)/i;

/**
 * Rule hiddenParts: class words with "hidden" in them that do not hide their element on a desktop
 * screen: a part of it is hidden (its label), or its overflow, or it is hidden on small screens or
 * in print only (`hidden-xs`, `mobile-hidden`), or in a shop's quick view of a product
 * (`quick-add-hidden`), or until it has loaded.
 */
export const HIDDEN_PART =
  /^(?:.*label[-_]*hidden|hidden[-_]*label.*|.*overflow(?:-[xy])?-hidden|.*lazy[-_]?hidden|(?:.*[-_])?hidden[-_]+(?:xs|sm|md|s|small|medium|phone|mobile|tablet|palm|print)(?:[-_]?(?:down|only))?|(?:.*[-_])?(?:quick[-_]?(?:add|view|shop)|phone|mobile|tablet|print)[-_]+hidden)$/i;

/**
 * Rule dialogs: a dialog's name: a modal, a popup or a lightbox, shown over the page when asked for
 * (a login's panels and messages), or a consent box (a cookie notice and its settings). Links and buttons named so open one; a dialog's role Readability
 * knows.
 */
export const DIALOG = /(^|[-_\s])(modal|modals|dialog|popup|lightbox|consent)([-_\s]|$)/i;

/** Rule opening: names of blocks that hold captions, credits and notices (checked on a paragraph and 4 blocks up). */
export const NOT_TEXT =
  /(^|[-_\s])(image|img|photo|picture|caption|credit|cookie|consent|privacy|gdpr|notice|messenger|newsletter|promo|subscribe|social|share|metadata|meta)([-_\s]|$)/i;

/** Rule imageCaptions: images that sit in a line of text, not above a caption: emoji, icons, smileys. */
export const INLINE_IMAGE = /emoji|smiley|icon/i;
