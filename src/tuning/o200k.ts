import type * as O200kModule from 'gpt-tokenizer/cjs/encoding/o200k_base';

/**
 * gpt-tokenizer's o200k_base encoding by its CommonJS path: the package maps
 * `gpt-tokenizer/encoding/o200k_base` there through its `exports`, which this project's module
 * resolution (node10) does not read for types. Loaded when called: its tables take about 70 MB.
 * Beside it, the regex it splits text with before its merges (its `encodingParams/constants`),
 * so that a text can be cut where its tokens begin without decoding tokens: the library decodes
 * through one module-wide TextDecoder in streaming mode, and a decode that ends inside a character
 * leaves its bytes to the next one. And its core's count of one piece, which a count of each piece
 * of a whole text (a page's chunks) takes without the per-call setup of countTokens.
 */
export type O200kEncoding = typeof O200kModule;

/** The encoder's core, as its countTokens uses it for each piece of its split (gpt-tokenizer 4.0). */
interface Core {
  getBpeRankFromString(piece: string): number | undefined;
  bytePairEncode(piece: string): number[];
}

export interface O200k {
  encoding: O200kEncoding;
  split: RegExp;
  /** The tokens of one piece of `split`, as the library's countTokens counts it. */
  pieceTokens: (piece: string) => number;
}

export const loadO200k = (): O200k => {
  const encoding = require('gpt-tokenizer/cjs/encoding/o200k_base') as O200kEncoding;
  const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/cjs/encodingParams/constants') as {
    O200K_TOKEN_SPLIT_REGEX: RegExp;
  };
  const core = (encoding.default as unknown as { bytePairEncodingCoreProcessor: Core })
    .bytePairEncodingCoreProcessor;
  return {
    encoding,
    split: new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu'),
    pieceTokens: (piece) =>
      core.getBpeRankFromString(piece) !== undefined ? 1 : core.bytePairEncode(piece).length,
  };
};
