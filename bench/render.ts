/**
 * bench/render: rendered pages against the script a user would write instead (playwright-core:
 * goto, content, Readability over linkedom), both at the same page concurrency on one fixture
 * single-page app, alternating rounds; the memory of sift (or the script) and its browser together;
 * and what `render: auto` costs on static pages against `never`.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readability } from '@mozilla/readability';
import { chromium } from 'playwright-core';
import type { INestApplication } from '@nestjs/common';
import { parseHTML } from './support/stock-linkedom';
import { load, startSift, type LoadResult } from './support/harness';
import { CHROMIUM_PATHS } from '../src/config/env.schema';
import { firstExecutable } from '../src/config/parsers';
import { Renderer } from '../src/render/renderer';
import { processTree, treeMemory } from '../src/render/chromium-process';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
// The same Chromium for both sides: the one sift picks.
const CHROMIUM = firstExecutable(process.env.SIFT_CHROMIUM_PATH || CHROMIUM_PATHS);

/** A shell whose script fetches the article as JSON and writes it into the page. */
export async function spa(): Promise<{ server: http.Server; origin: string }> {
  const para = (i: number, k: number) =>
    `Paragraph ${k} of page ${i}: written by the page's own script from JSON it fetched, as single-page apps do.`;
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/data/')) {
      const i = Number(url.split('/').pop()) || 0;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ title: `Page ${i}`, paragraphs: Array.from({ length: 40 }, (_, k) => para(i, k)) }),
      );
    } else if (url === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(`fetch('/data/' + location.pathname.split('/').pop()).then((r) => r.json()).then((d) => {
        const a = document.createElement('article');
        a.innerHTML = '<h1>' + d.title + '</h1>' + d.paragraphs.map((p) => '<p>' + p + '</p>').join('');
        document.getElementById('app').appendChild(a);
      });`);
    } else if (url.startsWith('/static/')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html><head><title>Static</title></head><body><article><h1>Static</h1>${Array.from(
          { length: 60 },
          (_, k) => `<p>${para(0, k)} This one is served whole, no script needed.</p>`,
        ).join('')}</article></body></html>`,
      );
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html><head><title>App</title></head><body><div id="app"></div><script src="/app.js"></script></body></html>',
      );
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** CPU seconds (user + system) of processes, read from /proc. */
function procStats(pids: number[]): { cpu: Map<number, number> } {
  const cpu = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu.set(pid, (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // gone
    }
  }
  return { cpu };
}

function parentOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

interface Round {
  pages: number;
  seconds: number;
  p50: number;
  p95: number;
  cpuMsPerPage: number;
  /** Of which this process's (the driver, and sift or the script's own work). */
  ownMsPerPage: number;
  peakRssMb: number;
}

/** Runs `work` loops at `concurrency` for SECONDS, sampling the processes `pids()` names. */
async function measure(
  concurrency: number,
  pids: () => number[],
  once: (i: number) => Promise<void>,
): Promise<Round> {
  const seen = new Map<number, number>();
  const before = procStats(pids()).cpu;
  let peak = 0;
  let samples = 0;
  const sample = () => {
    const all = [process.pid, ...pids()];
    const s = procStats(all);
    // Memory as proportional set size: Chromium's processes share most of their pages, which a sum
    // of resident sizes would count once per process.
    if (samples++ % 5 === 0) peak = Math.max(peak, treeMemory(all));
    for (const [pid, c] of s.cpu) seen.set(pid, c);
  };
  const timer = setInterval(sample, 50);
  const cpu0 = process.cpuUsage();
  const lat: number[] = [];
  let n = 0;
  const end = Date.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const t = performance.now();
        await once(n++);
        lat.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  sample();
  clearInterval(timer);
  const own = process.cpuUsage(cpu0);
  let browserCpu = 0;
  for (const [pid, c] of seen) if (pid !== process.pid) browserCpu += c - (before.get(pid) ?? 0);
  lat.sort((a, b) => a - b);
  return {
    pages: lat.length,
    seconds,
    p50: lat[lat.length >> 1],
    p95: lat[Math.floor(lat.length * 0.95)],
    cpuMsPerPage: ((own.user + own.system) / 1000 + browserCpu * 1000) / lat.length,
    ownMsPerPage: (own.user + own.system) / 1000 / lat.length,
    peakRssMb: peak / 1048576,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function siftRound(
  app: INestApplication,
  url: string,
  origin: string,
  concurrency: number,
): Promise<Round> {
  const renderer = app.get(Renderer, { strict: false });
  let k = 0;
  return measure(
    concurrency,
    () => renderer.processes(),
    async () => {
      const res = await fetch(`${url}/v1/fetch`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench-token-0001', 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${origin}/app/${k++}`, render: 'always', max_age_s: 0 }),
      });
      const env = (await res.json()) as { rendered?: boolean; content?: string };
      if (!env.rendered || !env.content?.includes('Paragraph 3'))
        throw new Error(`not rendered: ${JSON.stringify(env).slice(0, 200)}`);
    },
  );
}

export async function benchRender(): Promise<Record<string, number | string>> {
  const fx = await spa();
  const out: Record<string, number | string> = {};
  // The script: one browser, a context per page (as careful scripts do), the same concurrency.
  const browser = await chromium.launch({ executablePath: CHROMIUM, chromiumSandbox: false });
  let j = 0;
  const scriptRound = (concurrency: number) =>
    measure(
      concurrency,
      () => processTree(browserRoot()),
      async () => {
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          await page.goto(`${fx.origin}/app/${j++}`, { waitUntil: 'networkidle' });
          const article = new Readability(
            parseHTML(await page.content()).document as unknown as Document,
          ).parse();
          if (!article?.textContent?.includes('Paragraph 3')) throw new Error('script: not rendered');
        } finally {
          await context.close();
        }
      },
    );
  // playwright-core does not expose a launched browser's process: it is this process's one child
  // now, before sift starts its own.
  const root = processTree(process.pid).find((p) => parentOf(p) === process.pid);
  if (!root) throw new Error("the script's browser process was not found");
  const browserRoot = () => root;
  try {
    for (const pages of [2, 4]) {
      const { app, url } = await startSift({
        SIFT_RENDER_PAGES: String(pages),
        SIFT_FLEET_RENDER_CONCURRENCY: String(pages),
      });
      try {
        await siftRound(app, url, fx.origin, pages); // warm-up: the browser starts
        await scriptRound(pages);
        const s: Round[] = [];
        const p: Round[] = [];
        for (let r = 0; r < 3; r++) {
          s.push(await siftRound(app, url, fx.origin, pages));
          p.push(await scriptRound(pages));
        }
        const rate = (x: Round) => x.pages / x.seconds;
        out[`${pages} at once: sift rendered pages/s (median of 3)`] = +median(s.map(rate)).toFixed(2);
        out[`${pages} at once: script pages/s`] = +median(p.map(rate)).toFixed(2);
        out[`${pages} at once: sift/script (goal >= 1.0)`] = +(
          median(s.map(rate)) / median(p.map(rate))
        ).toFixed(2);
        out[`${pages} at once: sift p50 / p95 ms`] =
          `${median(s.map((x) => x.p50)).toFixed(0)} / ${median(s.map((x) => x.p95)).toFixed(0)}`;
        out[`${pages} at once: script p50 / p95 ms`] =
          `${median(p.map((x) => x.p50)).toFixed(0)} / ${median(p.map((x) => x.p95)).toFixed(0)}`;
        out[`${pages} at once: CPU ms per page, sift / script (approx.)`] =
          `${median(s.map((x) => x.cpuMsPerPage)).toFixed(0)} / ${median(p.map((x) => x.cpuMsPerPage)).toFixed(0)}`;
        out[`${pages} at once: of which this process, sift / script`] =
          `${median(s.map((x) => x.ownMsPerPage)).toFixed(0)} / ${median(p.map((x) => x.ownMsPerPage)).toFixed(0)}`;
        out[
          `${pages} at once: peak PSS MB, this process + browser, sift${pages === 2 ? ' (goal <= 450)' : ''}`
        ] = Math.round(Math.max(...s.map((x) => x.peakRssMb)));
        out[`${pages} at once: peak PSS MB, script + its browser`] = Math.round(
          Math.max(...p.map((x) => x.peakRssMb)),
        );
        if (pages === 2) Object.assign(out, await autoVersusNever(url, fx.origin));
      } finally {
        await app.close();
      }
    }
  } finally {
    await browser.close();
    fx.server.close();
  }
  return out;
}

/** render auto on static pages (judged, never rendered) against never: CPU per request. */
async function autoVersusNever(url: string, origin: string): Promise<Record<string, number | string>> {
  const make = (mode: string) =>
    `(i) => ({ method: 'POST', path: '/v1/fetch', body: JSON.stringify({ url: ${JSON.stringify(origin)} + '/static/' + i, max_age_s: 0, render: '${mode}' }) })`;
  const cpuPer = async (mode: string) => {
    const c0 = process.cpuUsage();
    const r: LoadResult = await load(url, 16, 3, make(mode));
    const c = process.cpuUsage(c0);
    return { ms: (c.user + c.system) / 1000 / (r.rps * 3), rps: r.rps };
  };
  const auto: number[] = [];
  const never: number[] = [];
  for (let r = 0; r < 5; r++) {
    never.push((await cpuPer('never')).ms);
    auto.push((await cpuPer('auto')).ms);
  }
  return {
    'static pages: CPU ms per request, auto / never': `${median(auto).toFixed(2)} / ${median(never).toFixed(2)}`,
    'static pages: auto costs (goal <= 3 %)': `${((median(auto) / median(never) - 1) * 100).toFixed(1)} %`,
  };
}
