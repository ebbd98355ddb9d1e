/**
 * Tokens of the texts sift sends, in OpenAI's o200k_base encoding, counted by gpt-tokenizer (exact,
 * plain JavaScript with a CommonJS build; 3–13 MB/s here against js-tiktoken's 1). Its tables take
 * about 70 MB: loaded on the first count, once per process (never in the extraction workers).
 * A page's text is ordinary text: a special token's spelling in it counts as the characters it is.
 */
import { loadO200k, type O200kEncoding } from '../tuning/o200k';

/** The encoding's name, as envelopes report it. */
export const TOKENIZER = 'o200k_base';

let loaded: O200kEncoding | undefined;
const encoding = (): O200kEncoding => (loaded ??= loadO200k());

const ORDINARY = { disallowedSpecial: new Set<string>() };

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : encoding().countTokens(text, ORDINARY);
}

/**
 * `text` cut to at most `max` tokens, never inside a character: its longest prefix the encoder
 * reads in at most `max` tokens (a cut may encode differently at its end: such a prefix is cut a
 * token shorter).
 */
export function cutToTokens(
  text: string,
  max: number,
  tokens = countTokens(text),
): { text: string; tokens: number; truncated: boolean } {
  if (tokens <= max) return { text, tokens, truncated: false };
  const ids = encoding().encode(text, ORDINARY);
  for (let n = Math.max(0, max); ; n--) {
    const cut = commonPrefix(text, encoding().decode(ids.slice(0, n)));
    const count = countTokens(cut);
    if (count <= max || n === 0) return { text: cut, tokens: count, truncated: true };
  }
}

/**
 * The longest prefix of `text` that `decoded` begins with: decoding part of a character's bytes
 * gives U+FFFD where the text has the character.
 */
function commonPrefix(text: string, decoded: string): string {
  const end = Math.min(text.length, decoded.length);
  let i = 0;
  while (i < end && text.charCodeAt(i) === decoded.charCodeAt(i)) i++;
  // Never half a surrogate pair.
  if (i > 0 && i < text.length) {
    const c = text.charCodeAt(i - 1);
    if (c >= 0xd800 && c <= 0xdbff) i--;
  }
  return text.slice(0, i);
}

/** The end of `text` in at most about `n` tokens (its last `n` tokens' characters, whole ones only). */
export function tailOfTokens(text: string, n: number): string {
  if (n <= 0 || text.length === 0) return '';
  const ids = encoding().encode(text, ORDINARY);
  if (ids.length <= n) return text;
  const decoded = encoding().decode(ids.slice(ids.length - n));
  let i = 0;
  const max = Math.min(text.length, decoded.length);
  while (i < max && text.charCodeAt(text.length - 1 - i) === decoded.charCodeAt(decoded.length - 1 - i)) i++;
  // Never half a surrogate pair.
  if (i > 0 && i < text.length) {
    const c = text.charCodeAt(text.length - i);
    if (c >= 0xdc00 && c <= 0xdfff) i--;
  }
  return text.slice(text.length - i);
}
