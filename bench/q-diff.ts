import { extractHtml } from '../src/fetch/extract';
import { articlePages, findCorpus } from './corpus';
const c = findCorpus()!;
const ids = process.argv.slice(2);
for (const p of articlePages(c).filter((p) => ids.some((i) => p.id.startsWith(i)))) {
  const got = extractHtml(p.html, p.url, 'text').content;
  const truthTokens = new Set(p.truth.match(/[\p{L}\p{N}_]+/gu));
  console.log('=== ', p.id.slice(0, 8), p.url);
  for (const para of got.split('\n')) {
    const toks = para.match(/[\p{L}\p{N}_]+/gu) ?? [];
    if (toks.length === 0) continue;
    const inTruth = p.truth.includes(para.slice(0, 40).trim()) ;
    if (!inTruth) console.log('  +', para.slice(0, 160));
  }
}
