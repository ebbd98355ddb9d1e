import type * as O200k from 'gpt-tokenizer/cjs/encoding/o200k_base';

/**
 * gpt-tokenizer's o200k_base encoding by its CommonJS path: the package maps
 * `gpt-tokenizer/encoding/o200k_base` there through its `exports`, which this project's module
 * resolution (node10) does not read for types. Loaded when called: its tables take about 70 MB.
 * Beside it, the regex it splits text with before its merges (its `encodingParams/constants`),
 * so that a text can be cut where its tokens begin without decoding tokens: the library decodes
 * through one module-wide TextDecoder in streaming mode, and a decode that ends inside a character
 * leaves its bytes to the next one.
 */
export type O200kEncoding = typeof O200k;

export const loadO200k = (): { encoding: O200kEncoding; split: RegExp } => {
  const encoding = require('gpt-tokenizer/cjs/encoding/o200k_base') as O200kEncoding;
  const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/cjs/encodingParams/constants') as {
    O200K_TOKEN_SPLIT_REGEX: RegExp;
  };
  return { encoding, split: new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu') };
};
