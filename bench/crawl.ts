/**
 * bench/crawl: a crawl of a 2,000-page site (17 KB article pages, each with a nav of links: all
 * reached within 4 hops of `/`, with cycles) against a batch of the same pages as a list, on a
 * real sift process and fresh URLs each time, in alternating rounds (medians): pages/s, CPU per
 * page, peak RSS. Discovery should cost little: the crawl at ≥ 0.9× the batch's pages/s. In the same
 * rounds, the site read by what a Node user would pick instead (bench/crawlee/crawl.js: crawlee's
 * CheerioCrawler, Readability, sift's markdown writer, in memory only) at the same concurrency,
 * robots read: sift's crawl at ≥ 1.8× its pages/s for ≤ 0.7× its CPU per page. Then the time of
 * /v1/map over a sitemap index of 3 gzip sitemaps with 30,000 entries.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { TERMINAL_JOB_STATUSES } from '../src/common/job-status';
import { MAX_MAP_LIMIT } from '../src/crawl/map.service';
import { kill, NODE_FLAGS, startSiftProcess } from '../test/support/process';

/** Pages of the fixture site, and so of each crawl and each batch. */
const PAGES = Number(process.env.BENCH_CRAWL_PAGES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** URL entries over the sitemap index's three gzip files (the map's answer: at most 30,000). */
const MAP_ENTRIES = Number(process.env.BENCH_MAP_ENTRIES ?? MAX_MAP_LIMIT);
const MAP_CALLS = 3;
const CONCURRENCY = Number(process.env.BENCH_CRAWL_CONCURRENCY ?? 16);
const TOKEN = 'bench-crawl-token';

/**
 * The page server, in a process of its own: its CPU is not sift's. Under any prefix (`/c0/`,
 * `/b0/`…: fresh URLs for each job), page 0 is `/{prefix}/` and page i `/{prefix}/p/{i}`; page i
 * links to pages 10i+1..10i+10 (so every page is within 4 hops of page 0 for 2,000 pages), back
 * to page 0, and to three others (cycles). robots.txt allows all, without a Crawl-delay;
 * /sitemap.xml is an index of three gzip sitemaps of ENTRIES URLs in all, which are never fetched.
 */
const SERVER = `
const http = require('node:http');
const zlib = require('node:zlib');
const PAGES = Number(process.env.PAGES);
const ENTRIES = Number(process.env.ENTRIES);
const href = (prefix, j) => (j === 0 ? '/' + prefix + '/' : '/' + prefix + '/p/' + j);
function nav(prefix, i) {
  const to = [0];
  for (let k = 10 * i + 1; k <= 10 * i + 10 && k < PAGES; k++) to.push(k);
  for (let k = 1; k <= 3; k++) to.push((i * 7919 + k * 104729) % PAGES);
  return '<nav>' + to.map((j) => '<a href="' + href(prefix, j) + '">' + (j === 0 ? 'Home' : 'Page ' + j) + '</a>').join(' ') + '</nav>';
}
function page(prefix, i) {
  const p = (k) => '<p>Paragraph ' + k + ' of page ' + i + '. Sift turns pages like this one into clean markdown, text or html, with enough words to be an article.</p>';
  return '<!doctype html><html><head><title>Page ' + i + '</title></head><body>' + nav(prefix, i) + '<article><h1>Page ' + i + '</h1>' + Array.from({ length: 130 }, (_, k) => p(k)).join('\\n') + '</article><footer>footer</footer></body></html>';
}
const files = new Map();
const server = http.createServer((req, res) => {
  const url = req.url || '/';
  const m = /^\\/([a-z]+\\d+)\\/(?:p\\/(\\d+))?$/.exec(url);
  if (url === '/robots.txt') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('User-agent: *\\nAllow: /\\n');
  } else if (files.has(url)) {
    res.writeHead(200, { 'content-type': url.endsWith('.gz') ? 'application/gzip' : 'application/xml' });
    res.end(files.get(url));
  } else if (m && Number(m[2] || 0) < PAGES) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(m[1], Number(m[2] || 0)));
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  }
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  const origin = 'http://127.0.0.1:' + server.address().port;
  const xml = (root, item, locs) => '<?xml version="1.0" encoding="UTF-8"?>\\n<' + root + ' xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\\n' + locs.map((l) => '<' + item + '><loc>' + l + '</loc></' + item + '>').join('\\n') + '\\n</' + root + '>\\n';
  const index = [];
  for (let f = 0; f < 3; f++) {
    const locs = [];
    for (let n = f; n < ENTRIES; n += 3) locs.push(origin + '/p/' + n);
    files.set('/sitemaps/' + f + '.xml.gz', zlib.gzipSync(xml('urlset', 'url', locs)));
    index.push(origin + '/sitemaps/' + f + '.xml.gz');
  }
  files.set('/sitemap.xml', xml('sitemapindex', 'sitemap', index));
  process.stdout.write(origin + '\\n');
});
`;

export async function startServer(): Promise<{ origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', SERVER], {
    env: { ...process.env, PAGES: String(PAGES), ENTRIES: String(MAP_ENTRIES) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const origin = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d) => resolve(String(d).trim())),
  );
  return { origin, child };
}

interface JobEnd {
  status: string;
  targets_total: number;
  targets_failed: number;
}

interface Run {
  pps: number;
  cpuMs: number;
}

const CRAWLEE = path.join(__dirname, '..', '..', 'bench', 'crawlee');

/** The site read by crawlee from `start`, in a process of its own (see bench/crawlee/crawl.js). */
async function crawlee(start: string, pages: number): Promise<Run & { peakRssMb: number }> {
  if (!fs.existsSync(path.join(CRAWLEE, 'node_modules', '@crawlee', 'cheerio')))
    throw new Error('bench/crawl: crawlee is not installed (make bench installs bench/crawlee)');
  const child = spawn(
    process.execPath,
    [path.join(CRAWLEE, 'crawl.js'), start, String(pages), String(CONCURRENCY)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bench/crawl: crawlee exited ${code}`);
  const r = JSON.parse(out) as {
    pages: number;
    failed: number;
    written: number;
    seconds: number;
    cpuMs: number;
    peakRssMb: number;
  };
  if (r.pages !== pages || r.failed !== 0 || r.written !== pages)
    throw new Error(`bench/crawl: crawlee read ${JSON.stringify(r)}, not ${pages} pages`);
  return { pps: pages / r.seconds, cpuMs: r.cpuMs / pages, peakRssMb: r.peakRssMb };
}

/** Submits a job (POST path) and polls its view until it ends: the seconds from submit to the end. */
async function runJob(
  siftUrl: string,
  H: Record<string, string>,
  route: '/v1/crawl' | '/v1/batch',
  body: object,
): Promise<{ seconds: number; view: JobEnd }> {
  const t = performance.now();
  const sub = await request(`${siftUrl}${route}`, { method: 'POST', headers: H, body: JSON.stringify(body) });
  if (sub.statusCode !== 202)
    throw new Error(`bench/crawl: ${route} answered ${sub.statusCode}: ${await sub.body.text()}`);
  const job = (await sub.body.json()) as { id: string };
  let view = { status: 'queued' } as JobEnd;
  while (!(TERMINAL_JOB_STATUSES as readonly string[]).includes(view.status)) {
    await new Promise((r) => setTimeout(r, 50));
    view = (await (await request(`${siftUrl}/v1/batch/${job.id}`, { headers: H })).body.json()) as JobEnd;
  }
  return { seconds: (performance.now() - t) / 1000, view };
}

/** The crawl of the site from `start`: every page fetched afresh, links only. */
const crawlOf = (start: string, pages: number) => ({
  url: start,
  limit: pages,
  max_depth: 6,
  sitemap: 'skip',
  options: { max_age_s: 0 },
});

/** A crawl of `pages` pages of the site from `start` (a prefix's root), checked whole. */
export async function runCrawl(siftUrl: string, H: Record<string, string>, start: string, pages: number) {
  const run = await runJob(siftUrl, H, '/v1/crawl', crawlOf(start, pages));
  if (run.view.status !== 'done' || run.view.targets_total !== pages || run.view.targets_failed !== 0)
    throw new Error(`bench/crawl: a crawl ended ${JSON.stringify(run.view)}, not done with ${pages} pages`);
  return run;
}

/** CPU seconds a process has used, all its threads (utime + stime). */
function cpuS(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** The process's peak resident set so far (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchCrawl(): Promise<Record<string, number | string>> {
  const { origin, child: server } = await startServer();
  const out: Record<string, number | string> = {};
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-crawl-'));
  const sift = await startSiftProcess(
    {
      SIFT_DB: path.join(dir, 'sift.db'),
      SIFT_TOKENS: `${TOKEN}:bench:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: String(CONCURRENCY),
      SIFT_PER_HOST_CONCURRENCY: String(CONCURRENCY),
      SIFT_FLEET_MAX_TARGETS: String(Math.max(10_000, PAGES)),
    },
    process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? NODE_FLAGS,
  );
  const pid = sift.child.pid!;
  const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const options = { max_age_s: 0 };
  try {
    // Side by side: a crawl from page 0, then a batch of the same pages as a list, fresh URLs each.
    const runs: Record<'crawl' | 'batch' | 'crawlee', Run[]> = { crawl: [], batch: [], crawlee: [] };
    let crawleeRssMb = 0;
    const kinds = ['crawl', 'batch', 'crawlee'] as const;
    // Round -1 warms sift up (a tenth of the pages each way) and is not counted; then each round
    // starts with the next kind. crawlee starts afresh each time, as a user's script does.
    for (let round = -1; round < ROUNDS; round++) {
      const order = round < 0 ? kinds.slice(0, 2) : kinds.map((_, k) => kinds[(round + k) % kinds.length]);
      const pages = round < 0 ? Math.max(1, Math.floor(PAGES / 10)) : PAGES;
      for (const kind of order) {
        const prefix = `${origin}/${kind[0]}${kind === 'crawlee' ? 'e' : ''}${round < 0 ? 'w' : ''}${round + 1}`;
        if (kind === 'crawlee') {
          const r = await crawlee(`${prefix}/`, pages);
          runs.crawlee.push(r);
          crawleeRssMb = Math.max(crawleeRssMb, r.peakRssMb);
          continue;
        }
        const cpu0 = cpuS(pid);
        const { seconds, view } =
          kind === 'crawl'
            ? await runJob(sift.url, H, '/v1/crawl', crawlOf(`${prefix}/`, pages))
            : await runJob(sift.url, H, '/v1/batch', {
                targets: Array.from({ length: pages }, (_, i) => ({
                  url: i === 0 ? `${prefix}/` : `${prefix}/p/${i}`,
                })),
                options,
              });
        if (view.status !== 'done' || view.targets_total !== pages || view.targets_failed !== 0) {
          throw new Error(
            `bench/crawl: the ${kind} ended ${JSON.stringify(view)}, not done with ${pages} pages`,
          );
        }
        if (round >= 0) runs[kind].push({ pps: pages / seconds, cpuMs: ((cpuS(pid) - cpu0) * 1000) / pages });
      }
    }
    const crawlPps = median(runs.crawl.map((r) => r.pps));
    const batchPps = median(runs.batch.map((r) => r.pps));
    out['pages per job, rounds'] = `${PAGES}, ${ROUNDS} (alternating, medians)`;
    out['crawl pages/s (max_depth 6, sitemap skip)'] = +crawlPps.toFixed(1);
    out['batch of the same pages as a list, pages/s'] = +batchPps.toFixed(1);
    out['crawl/batch ratio, each round'] = runs.crawl
      .map((r, i) => (r.pps / runs.batch[i].pps).toFixed(2))
      .join(' ');
    out['crawl/batch ratio of the medians (goal >= 0.9)'] = +(crawlPps / batchPps).toFixed(2);
    out['crawl CPU ms/page, all threads'] = +median(runs.crawl.map((r) => r.cpuMs)).toFixed(2);
    out['batch CPU ms/page, all threads'] = +median(runs.batch.map((r) => r.cpuMs)).toFixed(2);
    out['sift peak RSS MB, crawls and batches'] = peakRssMb(pid);
    const crawleePps = median(runs.crawlee.map((r) => r.pps));
    const crawleeCpu = median(runs.crawlee.map((r) => r.cpuMs));
    const crawlCpu = median(runs.crawl.map((r) => r.cpuMs));
    out['crawlee pages/s (CheerioCrawler, in memory)'] = +crawleePps.toFixed(1);
    out['crawlee CPU ms/page, all threads'] = +crawleeCpu.toFixed(2);
    out['crawlee peak RSS MB'] = crawleeRssMb;
    out['sift crawl/crawlee, each round'] = runs.crawl
      .map((r, i) => (r.pps / runs.crawlee[i].pps).toFixed(2))
      .join(' ');
    out['sift crawl/crawlee pages/s (goal >= 1.8)'] = +(crawlPps / crawleePps).toFixed(2);
    out['sift crawl/crawlee CPU per page (goal <= 0.7)'] = +(crawlCpu / crawleeCpu).toFixed(2);

    // /v1/map over the sitemap index: sitemaps only, so no page is fetched.
    const times: number[] = [];
    let links = 0;
    for (let call = 0; call < MAP_CALLS; call++) {
      const t = performance.now();
      const res = await request(`${sift.url}/v1/map`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ url: `${origin}/`, limit: MAX_MAP_LIMIT, sitemap: 'only' }),
      });
      if (res.statusCode !== 200)
        throw new Error(`bench/crawl: /v1/map answered ${res.statusCode}: ${await res.body.text()}`);
      links = ((await res.body.json()) as { links: unknown[] }).links.length;
      times.push(performance.now() - t);
      if (links !== MAP_ENTRIES)
        throw new Error(`bench/crawl: /v1/map gave ${links} links, not ${MAP_ENTRIES}`);
    }
    out[`map: links (3 gzip sitemaps, ${MAP_ENTRIES} entries)`] = links;
    out[`map: ms per call (median of ${MAP_CALLS})`] = Math.round(median(times));
    out['sift peak RSS MB, whole run (maps included)'] = peakRssMb(pid);
  } finally {
    await kill(sift, 'SIGTERM');
    server.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
