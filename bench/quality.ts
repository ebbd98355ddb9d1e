/**
 * bench/quality: extraction quality on the shared corpus (../shared/corpus, or SIFT_CORPUS), both
 * yardsticks side by side: the article benchmark's shingle F1, and trafilatura's evaluation (its
 * shared half) by its own segment metric, each over 5 folds (fixed seed) for the spread, with the
 * verdicts given to those ordinary pages and the extraction's CPU per page; WCXB's shared half
 * (every kind of page) by its word F1, overall and by kind; then, for each rule
 * listed in src/extract/rules.ts, what it earns on each fold (F with it, less F without it), on
 * the article benchmark and on WCXB by kind of page, and whether it earns its place (the corpus
 * suite's floors are the rest).
 */
import { ALL_RULES, RULES, type RuleName } from '../src/extract/rules';
import { extractHtml } from '../src/extract/extract';
import { verdictOf } from '../src/extract/verdict';
import {
  articlePages,
  crossValidate,
  findCorpus,
  kFolds,
  scoreArticles,
  scoreSegments,
  trafilaturaPages,
} from '../test/support/corpus';
import { scoreWcxb, wcxbPages, words, type WcxbPage } from '../test/support/wcxb';

const spread = (xs: number[]) => `${Math.min(...xs).toFixed(4)}–${Math.max(...xs).toFixed(4)}`;

export function benchQuality(): Record<string, number | string> {
  const corpus = findCorpus();
  if (!corpus) return { corpus: 'not found: set SIFT_CORPUS to the shared corpus' };
  const articles = articlePages(corpus);
  const articleText = new Map(articles.map((p) => [p.id, extractHtml(p.html, p.url, 'text').content]));
  const a = scoreArticles(articles, (id) => articleText.get(id)!);
  const aFolds = kFolds(articles).map((f) => scoreArticles(f, (id) => articleText.get(id)!).f1);

  const pages = trafilaturaPages(corpus);
  const { text, verdict, cpuMsPerPage } = extractEach(pages);
  const verdicts: Record<string, number> = {};
  for (const v of verdict.values()) verdicts[v] = (verdicts[v] ?? 0) + 1;
  const t = scoreSegments(pages, (id) => text.get(id)!);
  const tFolds = kFolds(pages).map((f) => scoreSegments(f, (id) => text.get(id)!).f);
  const w = wcxb(corpus);
  return {
    'article benchmark pages': a.pages,
    'article benchmark F1 (P, R)': `${a.f1.toFixed(4)} (${a.precision.toFixed(4)}, ${a.recall.toFixed(4)})`,
    'article benchmark F1, 5 folds': spread(aFolds),
    'trafilatura-eval (shared half) pages': t.pages,
    'trafilatura-eval F (P, R)': `${t.f.toFixed(4)} (${t.precision.toFixed(4)}, ${t.recall.toFixed(4)})`,
    'trafilatura-eval F, 5 folds': spread(tFolds),
    'trafilatura-eval verdicts': JSON.stringify(verdicts),
    'trafilatura-eval extraction CPU ms/page': +cpuMsPerPage.toFixed(1),
    ...w.figures,
    ...ruleFolds(pages, articles, text, articleText, w.pages, w.text),
  };
}

/** Each page's text, its verdict as the page loader judges a page, and the extraction's CPU per page. */
function extractEach(pages: { id: string; html: string; url: string }[]) {
  const text = new Map<string, string>();
  const verdict = new Map<string, string>();
  const cpu0 = process.cpuUsage();
  for (const p of pages) {
    const x = extractHtml(p.html, p.url, 'text');
    text.set(p.id, x.content);
    const content = x.pageText ?? x.content;
    verdict.set(p.id, verdictOf({ status: 200, html: p.html, title: x.title, content, isHtml: true }));
  }
  const cpu = process.cpuUsage(cpu0);
  return { text, verdict, cpuMsPerPage: (cpu.user + cpu.system) / 1000 / Math.max(1, pages.length) };
}

type Wcxb = { pages: WcxbPage[]; text: Map<string, string>; figures: Record<string, string | number> };

/** WCXB's shared half: word F1 overall and by kind, and the pages with content given another verdict than ok. */
function wcxb(corpus: string): Wcxb {
  const pages = wcxbPages(corpus);
  if (pages.length === 0)
    return { pages, text: new Map(), figures: { 'WCXB (shared half)': 'not in the corpus' } };
  const { text, verdict, cpuMsPerPage } = extractEach(pages);
  const walled: Record<string, number> = {};
  for (const p of pages) {
    const v = verdict.get(p.id)!;
    if (v !== 'ok' && words(p.truth).length >= 50) walled[v] = (walled[v] ?? 0) + 1;
  }
  const s = scoreWcxb(pages, (id) => text.get(id)!);
  const out: Record<string, string | number> = {
    'WCXB (shared half) pages': pages.length,
    'WCXB word F1 (P, R)': `${s.all.f1.toFixed(4)} (${s.all.precision.toFixed(4)}, ${s.all.recall.toFixed(4)})`,
    'WCXB word F1, 5 folds': spread(kFolds(pages).map((f) => scoreWcxb(f, (id) => text.get(id)!).all.f1)),
    'WCXB pages of 50 words or more not ok': JSON.stringify(walled),
    'WCXB extraction CPU ms/page': +cpuMsPerPage.toFixed(1),
  };
  for (const [kind, v] of Object.entries(s.byKind))
    out[`WCXB ${kind} (${v.pages} pages): word F1 (P, R)`] =
      `${v.f1.toFixed(4)} (${v.precision.toFixed(4)}, ${v.recall.toFixed(4)})`;
  return { pages, text, figures: out };
}

/**
 * Per rule of rules.ts: trafilatura-eval F with all rules less F without it, overall and per fold;
 * the same for article F1; and WCXB's word F1, overall and by kind of page.
 */
function ruleFolds(
  pages: ReturnType<typeof trafilaturaPages>,
  articles: ReturnType<typeof articlePages>,
  text: Map<string, string>,
  articleText: Map<string, string>,
  wcxbAll: WcxbPage[],
  wcxbText: Map<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const folds = kFolds(pages);
  const f = (ps: typeof pages, get: (id: string) => string) => scoreSegments(ps, get).f;
  const a = (get: (id: string) => string) => scoreArticles(articles, get).f1;
  const cv = (get: (id: string) => string) => crossValidate(articles, { x: get }).f1;
  const dead: string[] = [];
  for (const rule of Object.keys(RULES) as RuleName[]) {
    const rules = { ...ALL_RULES, [rule]: false };
    const off = new Map(pages.map((p) => [p.id, extractHtml(p.html, p.url, 'text', { rules }).content]));
    const aOff = new Map(articles.map((p) => [p.id, extractHtml(p.html, p.url, 'text', { rules }).content]));
    const on = (id: string) => text.get(id)!;
    const was = (id: string) => off.get(id)!;
    const d = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(4);
    const perFold = folds.map((fold) => d(f(fold, on) - f(fold, was))).join(' ');
    const article = d(a((id) => articleText.get(id)!) - a((id) => aOff.get(id)!));
    out[`rule ${rule}: ΔF (5 folds), Δ article F1`] =
      `${d(f(pages, on) - f(pages, was))} (${perFold}), ${article}`;
    let wcxbGain = 0;
    if (wcxbAll.length > 0) {
      const wOff = new Map(wcxbAll.map((p) => [p.id, extractHtml(p.html, p.url, 'text', { rules }).content]));
      const withIt = scoreWcxb(wcxbAll, (id) => wcxbText.get(id)!);
      const without = scoreWcxb(wcxbAll, (id) => wOff.get(id)!);
      wcxbGain = withIt.all.f1 - without.all.f1;
      const kinds = Object.keys(withIt.byKind)
        .map((k) => `${k} ${d(withIt.byKind[k].f1 - without.byKind[k].f1)}`)
        .join(', ');
      out[`rule ${rule}: Δ WCXB word F1 (by kind)`] = `${d(wcxbGain)} (${kinds})`;
    }
    // Its place is earned when the cross-validated article F1 is not higher without it, or what it
    // costs there it earns more than back on trafilatura's evaluation (a lead is text there only)
    // or on WCXB's kinds of page.
    const cost = cv((id) => aOff.get(id)!) - cv((id) => articleText.get(id)!);
    if (cost > 0 && Math.max(f(pages, on) - f(pages, was), wcxbGain) <= cost) dead.push(rule);
  }
  out['rules that do not earn their place (goal: none)'] = dead.length ? dead.join(', ') : 'none';
  return out;
}
