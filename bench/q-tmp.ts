import { extractHtml } from '../src/fetch/extract';
import { articlePages, findCorpus, readabilityPages, scoreArticles } from '../bench/corpus';
const c = findCorpus()!;
const pages = articlePages(c);
const t = Date.now(); let bytes = 0;
const out = new Map<string,string>();
for (const p of pages) { bytes += p.html.length; out.set(p.id, extractHtml(p.html, p.url, 'text').content); }
const s = scoreArticles(pages, (id) => out.get(id)!);
const A = scoreArticles(pages.filter(p=>p.id<'8'), (id) => out.get(id)!);
const B = scoreArticles(pages.filter(p=>p.id>='8'), (id) => out.get(id)!);
console.log('tune half F1', A.f1.toFixed(4), A.pages, 'held-out half F1', B.f1.toFixed(4), B.pages);
console.log('F1', s.f1.toFixed(4), 'P', s.precision.toFixed(4), 'R', s.recall.toFixed(4), 'MB/s', (bytes/1e6/((Date.now()-t)/1000)).toFixed(2));
console.log(s.perPage.sort((a,b)=>a.f1-b.f1).slice(0,12).map(x=>x.id.slice(0,8)+':'+x.f1.toFixed(2)).join(' '));
const rp = readabilityPages(c); let ok = 0; const bad: string[] = [];
for (const p of rp) { const got = extractHtml(p.html, 'http://fakehost/test/page.html', 'text').title; if (got.trim() === p.title.trim()) ok++; else bad.push(p.name+': '+JSON.stringify(got)+' vs '+JSON.stringify(p.title)); }
console.log('titles', ok, '/', rp.length); console.log(bad.join('\n'));
