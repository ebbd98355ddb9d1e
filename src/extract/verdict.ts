/**
 * What a fetched page really is, so a block page or a "not found" served with 200 is never passed
 * off as content. The rules read the status, the raw html, the title and the words extracted, and
 * name no site: they look for the markup and wording bot checks, captcha walls, JavaScript-only
 * shells and missing-page templates share, and only on pages too short to be an article.
 */
import { elementTexts, hasAppRoot, seenWords, stripTags } from './raw-html';

export const VERDICTS = ['ok', 'empty', 'challenge', 'not_found', 'error_page'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** A page with fewer words than this is `empty`. */
export const EMPTY_WORDS = 50;
/** Challenge and not-found pages are short: a page with more words than this is neither. */
const SHORT_WORDS = 200;

/**
 * A page whose reader sees this many words or more is not a bot check's wall, whatever captcha
 * markup or <noscript> notice it holds (a comment form's reCAPTCHA, say): walls show under 90.
 */
const WALL_WORDS = 120;

/** Markup of bot-check and captcha services (scripts, form ids, cookies named in the page). */
const CHALLENGE_MARKUP = new RegExp(
  [
    'cf-browser-verification',
    'cf_chl_opt',
    'cf-challenge',
    'challenges\\.cloudflare\\.com',
    '/cdn-cgi/challenge-platform/h/',
    'cf-error-details',
    'cf-turnstile',
    'g-recaptcha',
    'recaptcha/api\\.js',
    'h-captcha',
    'hcaptcha\\.com',
    'captcha-delivery\\.com',
    'px-captcha',
    '_incapsula_resource',
    'incapsula incident id',
    'awswaf',
    'aws-waf-token',
    'ddos-guard',
    'sucuri.{0,40}firewall',
    '/_sec/cp_challenge',
    'arkoselabs',
    'funcaptcha',
    'geetest',
  ].join('|'),
  'i',
);

/** What such pages say. */
const CHALLENGE_WORDS = new RegExp(
  [
    'just a moment',
    'checking (your|if the site connection is secure|the site connection)',
    'checking your browser',
    'verifying (your|the) browser',
    'javascript is not available',
    'verify(ing)? (that )?you are (a )?human',
    'verify you are not a (robot|bot)',
    'are you a robot',
    "(i'?m|i am) not a robot",
    'prove you are (a )?human',
    'complete the (security check|captcha)',
    'security check to access',
    'unusual traffic from your computer',
    'press (&|and) hold',
    'attention required',
    'access (to this page )?(has been )?denied',
    "you don'?t have permission to access",
    'you have been blocked',
    'request unsuccessful',
    'pardon our interruption',
    'ddos protection by',
    'one more step',
    'bot (detection|protection|verification)',
    'human verification',
    'please (enable|turn on) (javascript|cookies)',
    '(enable|turn on) javascript and cookies',
    'javascript is (disabled|required|not enabled)',
    '(you need to|you must|please) enable javascript',
    '(this (site|app|page)|it) (requires|needs) javascript',
    'without javascript',
  ].join('|'),
  'i',
);

/** What a missing page says, in its title, its first heading or its first lines. */
const NOT_FOUND_WORDS = new RegExp(
  [
    '\\b404\\b',
    'page not found',
    '\\bnot found\\b',
    "\\b(page|file|article|content|post|product|resource|url)\\b[^.!?\\n]{0,60}?\\b(does not|doesn'?t|could not|couldn'?t|cannot|can'?t|no longer) (exists?|be found|available)",
    "(we|i) (couldn'?t|could not|can'?t|cannot) find (the|that|this|what)",
    'no longer (exists|available)',
    'nothing (was )?found',
    "(this|that) page (does not|doesn'?t) exist",
    'page (is )?(missing|unavailable|introuvable)',
    'page introuvable',
    'seite nicht gefunden',
    'página no encontrada',
    'pagina non trovata',
    'pagina niet gevonden',
    'ページが見つかりません',
    'страница не найдена',
  ].join('|'),
  'i',
);

/**
 * The verdict reads at most this much of a page's html (and of its content): a challenge page, a
 * script shell or a missing-page template says what it is near the top.
 */
export const VERDICT_READ_CHARS = 256 * 1024;
/** Of the title, the first heading and the content, the verdict reads this much as the page's head. */
const HEAD_CHARS = 600;

/**
 * A word: a run of letters and digits, or in scripts written without spaces (Chinese, Japanese),
 * every two characters, about a word's length there. Matched where a word starts (sticky).
 */
const WORD_AT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]{1,2}|[\p{L}\p{N}]+/uy;
/** The rest of a word begun in ASCII letters and digits. */
const WORD_REST_AT = /[\p{L}\p{N}]*/uy;

/** An ASCII letter or digit. */
const asciiWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);

/**
 * The words of `text` (runs of letters and digits), counted up to `max` (a page's verdict never
 * needs more: reading a whole article to learn it has over 200 words was 6% of the runner's time).
 * Tag-like spans are skipped when `skipTags`, as if each were a space.
 */
export function wordCount(text: string, max = Infinity, skipTags = false): number {
  let n = 0;
  const count = (part: string) => (n += wordsIn(part, max - n));
  if (!skipTags) {
    count(text);
    return n;
  }
  // What `/<[^>]*>/g` finds is skipped: from a '<' to the first '>' after it. Once a '<' has no
  // '>' after it, no tag follows.
  for (let i = 0; n < max;) {
    const lt = text.indexOf('<', i);
    const gt = lt < 0 ? -1 : text.indexOf('>', lt + 1);
    if (gt < 0) {
      count(text.slice(i));
      break;
    }
    if (lt > i) count(text.slice(i, lt));
    i = gt + 1;
  }
  return n;
}

/**
 * The words of `text`, up to `max`: those WORD_AT finds searching from the start, each found
 * after the last. ASCII is read a character at a time (a regex call per word was most of the cost
 * on English text); a word that starts or goes on past ASCII is left to the regexes.
 */
function wordsIn(text: string, max: number): number {
  let n = 0;
  for (let i = 0; i < text.length && n < max;) {
    const c = text.charCodeAt(i);
    if (c >= 128) {
      WORD_AT.lastIndex = i;
      if (WORD_AT.test(text)) {
        n++;
        i = WORD_AT.lastIndex;
      } else i++;
    } else if (asciiWordChar(c)) {
      n++;
      do i++;
      while (i < text.length && asciiWordChar(text.charCodeAt(i)));
      if (i < text.length && text.charCodeAt(i) >= 128) {
        WORD_REST_AT.lastIndex = i;
        WORD_REST_AT.test(text);
        i = WORD_REST_AT.lastIndex;
      }
    } else i++;
  }
  return n;
}

export interface VerdictInput {
  status: number;
  /** The page's html (empty for other types). */
  html: string;
  title: string;
  /** The extracted content (markdown or text; html output has its tags stripped here). */
  content: string;
  isHtml: boolean;
}

/**
 * Every pattern here is linear (no nested or overlapping unbounded repeats) and reads a bounded
 * prefix of the page: the verdict runs on the main thread, where a page must not hold up others.
 */
export function verdictOf(p: VerdictInput): Verdict {
  if (p.status >= 400) return 'error_page';
  if (p.status < 200 || p.status >= 300 || !p.isHtml) return 'ok';
  const content = p.content.slice(0, VERDICT_READ_CHARS);
  // An html output has its tags stripped: they are not words.
  const tagged = content.includes('<');
  const words = wordCount(content, SHORT_WORDS + 1, tagged);
  if (words <= SHORT_WORDS) {
    const html = p.html.slice(0, VERDICT_READ_CHARS);
    const text = tagged ? stripTags(content, HEAD_CHARS) : content.slice(0, HEAD_CHARS);
    const heading = stripTags(elementTexts(html, 'h1', 400, 1)[0] ?? '');
    const head = `${p.title.slice(0, HEAD_CHARS)}\n${heading}\n${text}`.replace(/[’‘]/g, "'");
    const noscript = elementTexts(html, 'noscript', 2000)
      .map((t) => stripTags(t))
      .join('\n');
    // Captcha markup, or a <noscript> asking for JavaScript, make a wall only of a page that shows
    // its reader little else (a comment form has a captcha; many pages ask for JavaScript there).
    const wall = () => seenWords(html, WALL_WORDS, (t, max) => wordCount(t, max, true)) < WALL_WORDS;
    if (
      CHALLENGE_WORDS.test(head) ||
      ((CHALLENGE_MARKUP.test(html) || CHALLENGE_WORDS.test(noscript)) && wall()) ||
      (words < EMPTY_WORDS && hasAppRoot(html) && /<script/i.test(html))
    ) {
      return 'challenge';
    }
    if (NOT_FOUND_WORDS.test(head)) return 'not_found';
  }
  return words < EMPTY_WORDS ? 'empty' : 'ok';
}

/**
 * Whether a browser would show more of a page than its html: an `empty` page with scripts, or a
 * `challenge` that is a script shell (scripts, and no bot-check markup: a browser does not pass those).
 */
export function wantsBrowser(verdict: Verdict, html: string): boolean {
  const head = html.slice(0, VERDICT_READ_CHARS);
  if (!/<script/i.test(head)) return false;
  return verdict === 'empty' || (verdict === 'challenge' && !CHALLENGE_MARKUP.test(head));
}
