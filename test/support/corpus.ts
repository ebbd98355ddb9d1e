/** Quality on ../shared/corpus: the article benchmark's shingle F1 and Readability titles. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { parseHTML } from 'linkedom';
import { decodeBody } from '../../src/fetch/decode';
import { prng } from './prng';

export function findCorpus(): string | undefined {
  for (const c of [process.env.SIFT_CORPUS, path.resolve(process.cwd(), '..', 'shared', 'corpus')]) {
    if (c && fs.existsSync(path.join(c, 'article-benchmark', 'ground-truth.json'))) return c;
  }
  return undefined;
}

const TOKEN = /[\p{L}\p{N}\p{M}_]+/gu;

function shingles(text: string, n = 4): Map<string, number> {
  const tokens = text.match(TOKEN) ?? [];
  const out = new Map<string, number>();
  for (let i = 0; i < Math.max(1, tokens.length - n + 1); i++) {
    const k = tokens.slice(i, i + n).join('\u0001');
    out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

/** The benchmark's per-page tp/fp/fn over 4-gram shingle counts, normalised by their sum. */
export function shingleMatch(truth: string, pred: string): [number, number, number] {
  const a = shingles(truth);
  const b = shingles(pred);
  let tp = 0,
    fp = 0,
    fn = 0;
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const t = a.get(k) ?? 0;
    const p = b.get(k) ?? 0;
    tp += Math.min(t, p);
    fp += Math.max(0, p - t);
    fn += Math.max(0, t - p);
  }
  const s = tp + fp + fn;
  return s > 0 ? [tp / s, fp / s, fn / s] : [0, 0, 0];
}

function precision([tp, fp, fn]: [number, number, number]): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fp === 0) return 0;
  return tp / (tp + fp);
}

function recall([tp, fp, fn]: [number, number, number]): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fn === 0) return 0;
  return tp / (tp + fn);
}

export interface ArticleScore {
  pages: number;
  precision: number;
  recall: number;
  f1: number;
  perPage: { id: string; f1: number }[];
}

export function articlePages(corpus: string): { id: string; html: string; truth: string; url: string }[] {
  const dir = path.join(corpus, 'article-benchmark');
  const gt = JSON.parse(fs.readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as Record<
    string,
    { articleBody: string; url: string }
  >;
  return Object.keys(gt)
    .sort()
    .filter((id) => fs.existsSync(path.join(dir, 'html', `${id}.html.gz`)))
    .map((id) => ({
      id,
      html: zlib.gunzipSync(fs.readFileSync(path.join(dir, 'html', `${id}.html.gz`))).toString('utf8'),
      truth: gt[id].articleBody,
      url: gt[id].url,
    }));
}

export function scoreArticles(
  pages: { id: string; truth: string }[],
  extract: (id: string) => string,
): ArticleScore {
  const per = pages.map((p) => ({ id: p.id, m: shingleMatch(p.truth, extract(p.id)) }));
  const P = per.reduce((s, x) => s + precision(x.m), 0) / per.length;
  const R = per.reduce((s, x) => s + recall(x.m), 0) / per.length;
  return {
    pages: per.length,
    precision: P,
    recall: R,
    f1: (2 * P * R) / (P + R),
    perPage: per.map((x) => {
      const p = precision(x.m),
        r = recall(x.m);
      return { id: x.id, f1: p + r > 0 ? (2 * p * r) / (p + r) : 0 };
    }),
  };
}

export function readabilityPages(corpus: string): { name: string; html: string; title: string }[] {
  const dir = path.join(corpus, 'readability');
  return fs
    .readdirSync(dir)
    .filter((n) => fs.existsSync(path.join(dir, n, 'expected-metadata.json')))
    .sort()
    .map((name) => ({
      name,
      html: fs.readFileSync(path.join(dir, name, 'source.html'), 'utf8'),
      title: (JSON.parse(fs.readFileSync(path.join(dir, name, 'expected-metadata.json'), 'utf8')).title ??
        '') as string,
    }));
}

/**
 * The Readability pages as articles: the text of expected.html (Readability's own output, kept
 * with its test suite) is the truth. The cleaning rules are chosen on the article benchmark, not on
 * these, so they are a second set of pages the rules were not fitted to; Readability's choices are
 * not always a reader's (it drops embedded posts, for one).
 */
export function readabilityArticles(
  corpus: string,
): { id: string; html: string; truth: string; url: string }[] {
  const dir = path.join(corpus, 'readability');
  return fs
    .readdirSync(dir)
    .filter((n) => fs.existsSync(path.join(dir, n, 'expected.html')))
    .sort()
    .map((id) => ({
      id,
      html: fs.readFileSync(path.join(dir, id, 'source.html'), 'utf8'),
      truth: parseHTML(
        `<html><body>${fs.readFileSync(path.join(dir, id, 'expected.html'), 'utf8')}</body></html>`,
      ).document.body.textContent.replace(/\s+/g, ' '),
      url: 'http://fakehost/test/page.html',
    }));
}

/** The Readability pages with their whole expected-metadata.json. */
export function readabilityMetadataPages(
  corpus: string,
): { name: string; html: string; expected: Record<string, unknown> }[] {
  const dir = path.join(corpus, 'readability');
  return fs
    .readdirSync(dir)
    .filter((name) => fs.existsSync(path.join(dir, name, 'expected-metadata.json')))
    .map((name) => ({
      name,
      html: fs.readFileSync(path.join(dir, name, 'source.html'), 'utf8'),
      expected: JSON.parse(fs.readFileSync(path.join(dir, name, 'expected-metadata.json'), 'utf8')) as Record<
        string,
        unknown
      >,
    }));
}

/** The pages in k folds, shuffled by a fixed seed: the same folds on every run. */
export function kFolds<T>(pages: T[], k = 5, seed = 20261130): T[][] {
  const rand = prng(seed);
  const order = pages.map((p) => ({ p, r: rand() })).sort((x, y) => x.r - y.r);
  return Array.from({ length: k }, (_, i) => order.filter((_, j) => j % k === i).map((x) => x.p));
}

export interface CrossValidation {
  /** Mean over the folds of the F1 on each fold of the variant chosen on the others. */
  f1: number;
  folds: { chosen: string; f1: number }[];
}

/**
 * k-fold cross-validation of extraction variants (sets of rules): for each fold, the variant with
 * the best F1 on the other folds is chosen, and scored on this one, which it was not chosen on.
 * A rule earns its place when the variants with it are chosen and the mean rises.
 */
export function crossValidate(
  pages: { id: string; truth: string }[],
  variants: Record<string, (id: string) => string>,
  k = 5,
  seed?: number,
): CrossValidation {
  const folds = kFolds(pages, k, seed);
  const out = folds.map((held, i) => {
    const train = folds.filter((_, j) => j !== i).flat();
    let best = '';
    let bestF1 = -1;
    for (const [name, extract] of Object.entries(variants)) {
      const f1 = scoreArticles(train, extract).f1;
      if (f1 > bestF1) [best, bestF1] = [name, f1];
    }
    return { chosen: best, f1: scoreArticles(held, variants[best]).f1 };
  });
  return { f1: out.reduce((s, f) => s + f.f1, 0) / out.length, folds: out };
}

export interface SegmentPage {
  /** The page's file in trafilatura-eval/html (without .gz). */
  id: string;
  url: string;
  /** The page decoded as sift decodes a page served as text/html with no charset. */
  html: string;
  with: string[];
  without: string[];
}

/** The half of trafilatura's evaluation in corpus/trafilatura-eval, in file order. */
export function trafilaturaPages(corpus: string): SegmentPage[] {
  const dir = path.join(corpus, 'trafilatura-eval');
  const data = JSON.parse(fs.readFileSync(path.join(dir, 'evaldata.json'), 'utf8')) as Record<
    string,
    { file: string; with: string[]; without: string[] }
  >;
  return Object.entries(data)
    .map(([url, d]) => ({
      id: d.file,
      url,
      html: decodeBody(
        zlib.gunzipSync(fs.readFileSync(path.join(dir, 'html', `${d.file}.gz`))),
        'text/html',
        true,
      ),
      with: d.with,
      without: d.without,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

export interface SegmentScore {
  pages: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: number;
  recall: number;
  f: number;
  /** Each page's counts, for finding the pages that lose most. */
  perPage: { id: string; tp: number; fp: number; fn: number }[];
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * trafilatura's metric (tests/eval_common.py): with whitespace collapsed, a `with` segment found in
 * the output is a true positive, else a false negative; a `without` segment found is a false
 * positive, else a true negative; an empty output finds nothing. Counts are summed over the pages.
 */
export function scoreSegments(pages: SegmentPage[], extract: (id: string) => string): SegmentScore {
  let tp = 0,
    fp = 0,
    fn = 0,
    tn = 0;
  const perPage = pages.map((p) => {
    const out = squash(extract(p.id));
    const found = (seg: string) => out.length > 0 && out.includes(squash(seg));
    const c = { id: p.id, tp: 0, fp: 0, fn: 0 };
    for (const s of p.with) {
      if (found(s)) c.tp++;
      else c.fn++;
    }
    for (const s of p.without) {
      if (found(s)) c.fp++;
      else tn++;
    }
    tp += c.tp;
    fp += c.fp;
    fn += c.fn;
    return c;
  });
  const precision = tp / (tp + fp);
  const recall = tp / (tp + fn);
  return {
    pages: pages.length,
    tp,
    fp,
    fn,
    tn,
    precision,
    recall,
    f: (2 * tp) / (2 * tp + fp + fn),
    perPage,
  };
}
