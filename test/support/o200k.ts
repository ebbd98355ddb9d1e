/**
 * The library's own o200k_base count, the reference sift's counts are held to: an instance of its
 * own, with the library's settings (its cache of merges included), whatever sift sets on the
 * instance it uses.
 */
import { GptEncoding } from 'gpt-tokenizer/cjs/GptEncoding';

const api = GptEncoding.getEncodingApi(
  'o200k_base',
  () => require('gpt-tokenizer/cjs/bpeRanks/o200k_base').default,
);

/** The library's tokens of a text, a special token's spelling read as text. */
export const encode = (s: string): number[] => api.encode(s, { disallowedSpecial: new Set() });
