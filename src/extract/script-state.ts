/**
 * The article a script-built page holds in its state: the JSON a framework writes into the page
 * for its scripts to render from (`<script id="__NEXT_DATA__" type="application/json">`,
 * `window.__INITIAL_STATE__ = {…}`). Its html may hold a shell, a teaser, or nothing.
 */
import { statedLines } from './stated-text';
import { wordCount } from './verdict';

/** A state script read at most: a page may hold megabytes of state. */
const MAX_STATE_CHARS = 4 << 20;

/** How deep, and how many values, a state is walked. */
const MAX_DEPTH = 64;
const MAX_VALUES = 200_000;

/** Words a string must hold to be prose (a title, a label or a date holds fewer). */
const PROSE_WORDS = 12;

/**
 * The article the page's state holds, as paragraphs: of the prose strings in its JSON (strings of
 * PROSE_WORDS words or more, html ones split at their blocks), those that sit at the same place
 * in it (the same keys, any list index: `article.body[].text`) and hold the most words together.
 * Undefined when the page holds no state, or no prose in it.
 */
export function stateParagraphs(html: string): string[] | undefined {
  const groups = new Map<string, string[]>();
  const words = new Map<string, number>();
  for (const json of stateTexts(html)) {
    let state: unknown;
    try {
      state = JSON.parse(json);
    } catch {
      continue; // A state written as JavaScript rather than JSON is not read.
    }
    collect(state, groups, words);
  }
  let best: string | undefined;
  for (const [place, n] of words) if (!best || n > words.get(best)!) best = place;
  return best ? groups.get(best) : undefined;
}

/** The JSON texts of the page's state scripts, each at most MAX_STATE_CHARS. */
function stateTexts(html: string): string[] {
  const out: string[] = [];
  // One pass over the page's scripts: a tag is read up to its first 1,000 characters.
  for (let at = html.indexOf('<script'); at >= 0; at = html.indexOf('<script', at)) {
    const tagEnd = html.indexOf('>', at);
    if (tagEnd < 0 || tagEnd - at > 1000) {
      at += 7;
      continue;
    }
    const close = html.indexOf('</script', tagEnd);
    if (close < 0) break;
    const tag = html.slice(at, tagEnd);
    at = close;
    if (close - tagEnd > MAX_STATE_CHARS) continue;
    const body = html.slice(tagEnd + 1, close);
    if (STATE_ID.test(tag) && /\btype\s*=\s*["']?application\/json\b/i.test(tag)) out.push(body);
    else {
      const m = STATE_ASSIGNMENT.exec(body.slice(0, 200));
      if (m) out.push(body.slice(m[0].length).trim().replace(/;\s*$/, ''));
    }
  }
  return out.filter((t) => /^\s*[{[]/.test(t));
}

/** A framework's state script is named `__NEXT_DATA__` and the like (a page's other JSON is config). */
const STATE_ID = /\bid\s*=\s*["']?__\w+__["'\s>]/i;

/** `window.__INITIAL_STATE__ =` and the like, at a script's start. */
const STATE_ASSIGNMENT = /^\s*(?:window|self)\s*(?:\.\s*__\w+__|\[\s*["']__\w+__["']\s*\])\s*=\s*/;

/** Prose strings of `state`, grouped by where they sit, with each group's words. */
function collect(state: unknown, groups: Map<string, string[]>, words: Map<string, number>): void {
  let seen = 0;
  const walk = (v: unknown, place: string, depth: number) => {
    if (++seen > MAX_VALUES || depth > MAX_DEPTH) return;
    if (typeof v === 'string') {
      const paragraphs = prose(v);
      if (paragraphs.length === 0) return;
      const group = groups.get(place) ?? [];
      groups.set(place, group);
      for (const p of paragraphs) {
        group.push(p);
        words.set(place, (words.get(place) ?? 0) + wordCount(p));
      }
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, `${place}[]`, depth + 1);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, `${place}.${k}`, depth + 1);
    }
  };
  walk(state, '', 0);
}

/** A string's paragraphs when it is prose (html split at its blocks, its tags dropped), else none. */
function prose(s: string): string[] {
  if (wordCount(s, PROSE_WORDS, true) < PROSE_WORDS || !lettered(s)) return [];
  return statedLines(s, /<[a-z][^>]*>/i.test(s));
}

/** Prose is mostly letters: a URL template, a style or a list of ids is not. */
function lettered(s: string): boolean {
  const sample = s.slice(0, 2000).replace(/<[^>]*>/g, '');
  const letters = sample.match(/\p{L}/gu)?.length ?? 0;
  return letters >= 0.7 * sample.replace(/\s+/g, '').length;
}
