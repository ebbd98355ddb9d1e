import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

/** WCXB's kinds of page (`category` is a collection: a shop's or a blog's list of items). */
export const WCXB_KINDS = [
  'article',
  'forum',
  'product',
  'collection',
  'category',
  'listing',
  'documentation',
  'service',
] as const;

export interface WcxbPage {
  id: string;
  url: string;
  html: string;
  kind: string;
  /** The reviewed main text. */
  truth: string;
}

/** The corpus's half of WCXB's development set (`wcxb/`), or none when it is absent. */
export function wcxbPages(corpus: string): WcxbPage[] {
  const dir = path.join(corpus, 'wcxb');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(path.join(dir, 'ground-truth'))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const id = f.replace(/\.json$/, '');
      const d = JSON.parse(fs.readFileSync(path.join(dir, 'ground-truth', f), 'utf8')) as {
        url: string;
        ground_truth: { main_content?: string };
        _internal: { page_type: { primary: string } };
      };
      return {
        id,
        url: d.url,
        kind: d._internal.page_type.primary,
        truth: d.ground_truth.main_content ?? '',
        html: zlib.gunzipSync(fs.readFileSync(path.join(dir, 'html', `${id}.html.gz`))).toString('utf8'),
      };
    });
}

/** Words as WCXB's evaluation takes them: Python's `\w+` over the lower-cased text. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

export interface WordScore {
  precision: number;
  recall: number;
  f1: number;
}

/** One page's bag-of-words overlap (an empty reference scores 1 only for an empty prediction). */
export function wordScore(predicted: string, truth: string): WordScore {
  const p = words(predicted);
  const t = words(truth);
  if (t.length === 0)
    return p.length === 0 ? { precision: 1, recall: 1, f1: 1 } : { precision: 0, recall: 0, f1: 0 };
  if (p.length === 0) return { precision: 0, recall: 0, f1: 0 };
  const left = new Map<string, number>();
  for (const w of t) left.set(w, (left.get(w) ?? 0) + 1);
  let overlap = 0;
  for (const w of p) {
    const n = left.get(w) ?? 0;
    if (n > 0) {
      overlap++;
      left.set(w, n - 1);
    }
  }
  const precision = overlap / p.length;
  const recall = overlap / t.length;
  return { precision, recall, f1: overlap === 0 ? 0 : (2 * precision * recall) / (precision + recall) };
}

/** Mean word P, R and F1 over the pages, overall and by kind. */
export function scoreWcxb(
  pages: WcxbPage[],
  predicted: (id: string) => string,
): { all: WordScore & { pages: number }; byKind: Record<string, WordScore & { pages: number }> } {
  const mean = (ps: WcxbPage[]) => {
    const s = ps.map((p) => wordScore(predicted(p.id), p.truth));
    const avg = (k: keyof WordScore) => s.reduce((n, x) => n + x[k], 0) / Math.max(1, s.length);
    return { pages: ps.length, precision: avg('precision'), recall: avg('recall'), f1: avg('f1') };
  };
  const byKind: Record<string, WordScore & { pages: number }> = {};
  for (const k of WCXB_KINDS) {
    const ps = pages.filter((p) => p.kind === k);
    if (ps.length > 0) byKind[k] = mean(ps);
  }
  return { all: mean(pages), byKind };
}
