import type * as O200k from 'gpt-tokenizer/cjs/encoding/o200k_base';

/**
 * gpt-tokenizer's o200k_base encoding by its CommonJS path: the package maps
 * `gpt-tokenizer/encoding/o200k_base` there through its `exports`, which this project's module
 * resolution (node10) does not read for types. Loaded when called: its tables take about 70 MB.
 */
export type O200kEncoding = typeof O200k;

export const loadO200k = (): O200kEncoding =>
  require('gpt-tokenizer/cjs/encoding/o200k_base') as O200kEncoding;
