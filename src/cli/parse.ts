// `sift parse FILE`: a file of this machine read by sift (POST /v1/parse), printed as fetch prints a page.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse } from './args';
import { api, ApiError, call, usage, type Reply } from './client';
import { FETCH_FLAGS, fetchOptions, inFlags } from './fetch-options';
import { printEnvelope } from './fetch';

/** The fetch flags that apply to a file (the API's ParseOptionsDto): none that reach a URL. */
export const PARSE_FLAGS = {
  format: FETCH_FLAGS.format,
  formats: FETCH_FLAGS.formats,
  'timeout-ms': FETCH_FLAGS['timeout-ms'],
  'max-bytes': FETCH_FLAGS['max-bytes'],
  tokens: FETCH_FLAGS.tokens,
  'max-tokens': FETCH_FLAGS['max-tokens'],
  'chunk-tokens': FETCH_FLAGS['chunk-tokens'],
  'chunk-overlap': FETCH_FLAGS['chunk-overlap'],
  links: FETCH_FLAGS.links,
  'include-selectors': FETCH_FLAGS['include-selectors'],
  'exclude-selectors': FETCH_FLAGS['exclude-selectors'],
  pages: FETCH_FLAGS.pages,
  ocr: FETCH_FLAGS.ocr,
} as const;

/**
 * The file as multipart/form-data, sent as bytes of `type` (none by default: sift tells what it is
 * by its name and its bytes). The options go as a JSON part.
 */
export function multipart(
  name: string,
  bytes: Buffer,
  options: Record<string, unknown>,
  type = 'application/octet-stream',
) {
  const boundary = `sift-${randomBytes(12).toString('hex')}`;
  // As browsers write a name: UTF-8, with a quote and line ends escaped.
  const quoted = name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="options"\r\n` +
    `Content-Type: application/json\r\n\r\n${JSON.stringify(options)}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted}"\r\n` +
    `Content-Type: ${type.replace(/[\r\n]/g, '')}\r\n\r\n`;
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    bytes: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
  };
}

export async function parseCmd(args: string[]): Promise<void> {
  const { positionals, values } = parse('parse', args, { ...PARSE_FLAGS, json: { type: 'boolean' } });
  const file = positionals[0];
  if (!file) usage('parse needs a file: sift parse FILE [options]; see sift help');
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    usage(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const name = path.basename(file);
  let res: Reply;
  try {
    res = await call(api(), 'POST', '/v1/parse', { raw: multipart(name, bytes, fetchOptions(values)) });
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(err.status, err.code, inFlags(err.detail), err.hint);
    throw err;
  }
  printEnvelope(await res.text(), name, values);
}
