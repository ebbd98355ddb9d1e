// A file of URLs, one a line (blank lines and # comments skipped), and the server's word about a
// target told as the file's line.
import * as fs from 'node:fs';
import { ApiError, usage } from './client';
import { inFlags } from './fetch-options';

export interface UrlFile {
  name: string;
  urls: string[];
  /** The 1-based line of each target (by idx), counting the skipped lines. */
  lines: number[];
}

export function readUrlFile(file: string): UrlFile {
  let text: string;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    usage(`cannot read ${file}: ${(err as Error).message}`);
  }
  const urls: string[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    if (!l || l.startsWith('#')) return;
    urls.push(l);
    lines.push(i + 1);
  });
  const name = file === '-' ? 'standard input' : file;
  if (urls.length === 0) usage(`${name} holds no URLs`);
  return { name, urls, lines };
}

const shown = (v: string) => (v.length > 200 ? `${v.slice(0, 200)}…` : v);

/**
 * The server's error about a submitted batch with `targets.N.…` told as `line L: <url>: …` and
 * job fields as the flags that set them; the hint names --ignore-invalid-urls, not its JSON field.
 */
export function inFileTerms(err: ApiError, f: UrlFile): ApiError {
  let badLine: number | undefined;
  const detail = inFlags(err.detail).replace(/targets\.(\d+)\.(?:url )?/g, (m, n: string) => {
    const idx = Number(n);
    if (f.lines[idx] === undefined) return m;
    badLine ??= f.lines[idx];
    return `line ${f.lines[idx]}: ${shown(f.urls[idx])}: `;
  });
  let hint = err.hint?.replace(/(send )?"?ignore_invalid_urls"?(: true)?/g, 'pass --ignore-invalid-urls');
  if (badLine !== undefined && /ignore-invalid-urls/.test(hint ?? ''))
    hint = `fix line ${badLine} of ${f.name}, or pass --ignore-invalid-urls to keep it as a failed target`;
  return new ApiError(err.status, err.code, detail, hint);
}
