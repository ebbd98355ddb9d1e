/**
 * bench/reach: what reaching a page costs beyond a plain fetch, each against the plain one in
 * alternating rounds (medians). Actions: a rendered fetch with five actions (three clicks of
 * "load more", a scroll, a scrape) against the same rendered fetch without them. Proxies: a static
 * fetch through Debian's tinyproxy (HTTP CONNECT) against the same fetch made directly. Every
 * request fetches anew (max_age_s 0). Requests/s, p99 latency, and CPU per request: sift's main
 * thread, and beside it the browser's processes or the proxy's.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Renderer } from '../src/render/renderer';
import { startTinyproxy } from '../test/support/egress-proxies';
import { load, startSift, type LoadRequest, type LoadResult } from './support/harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** CPU seconds (user + system) of a process, or of this process's main thread. */
function cpuS(pid: number, task = false): number {
  try {
    const stat = fs.readFileSync(task ? `/proc/self/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}
const mainThreadCpuS = () => cpuS(process.pid, true);

/** A feed whose "load more" button fetches two items a click, and an article; keep-alive. */
async function site(): Promise<{ server: http.Server; origin: string }> {
  const words = 'This sentence is here so that the page reads as an article with enough words. '.repeat(4);
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/more')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<li>More ${url} ${words}</li><li>Another ${words}</li>`);
    } else if (url.startsWith('/feed')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html><head><title>Feed</title></head><body><article><h1>Feed</h1><ul id="items">${Array.from(
          { length: 10 },
          (_, i) => `<li>Item ${i} ${words}</li>`,
        ).join('')}</ul><button id="more">Load more</button></article><script>
          let n = 0;
          document.getElementById('more').onclick = async () => {
            const r = await fetch('/more?' + (++n));
            document.getElementById('items').insertAdjacentHTML('beforeend', await r.text());
          };</script></body></html>`,
      );
    } else if (url === '/robots.txt') {
      res.writeHead(404).end();
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html><head><title>Article</title></head><body><article><h1>Article</h1>${Array.from(
          { length: 30 },
          () => `<p>${words}</p>`,
        ).join('')}</article></body></html>`,
      );
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  return { server, origin: `http://127.0.0.2:${(server.address() as AddressInfo).port}` };
}

const fetchOf = (body: object) => {
  const req: LoadRequest = {
    method: 'POST',
    path: '/v1/fetch',
    body: JSON.stringify({ max_age_s: 0, ...body }),
  };
  return new Function('i', `return ${JSON.stringify(req)}`) as (i: number) => LoadRequest;
};

type Run = { r: LoadResult; mainUs: number; besideUs: number };

/** Alternating rounds of each way; `beside` names the other processes whose CPU counts. */
async function rounds(
  url: string,
  ways: Record<string, (i: number) => LoadRequest>,
  connections: number,
  beside: () => number[],
): Promise<Record<string, Run[]>> {
  const names = Object.keys(ways);
  for (const [name, make] of Object.entries(ways)) {
    const r = await load(url, connections, 1, make);
    if (r.errors > 0 || !r.statuses['200']) throw new Error(`${name}: ${JSON.stringify(r.statuses)}`);
  }
  const runs: Record<string, Run[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names.map((_, i) => names[(i + round) % names.length])) {
      const sum = () => beside().reduce((n, pid) => n + cpuS(pid), 0);
      const [m0, b0] = [mainThreadCpuS(), sum()];
      const r = await load(url, connections, SECONDS, ways[name]);
      const requests = Math.max(1, r.rps * SECONDS);
      runs[name].push({
        r,
        mainUs: ((mainThreadCpuS() - m0) * 1e6) / requests,
        besideUs: ((sum() - b0) * 1e6) / requests,
      });
    }
  }
  return runs;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function report(out: Record<string, number | string>, runs: Record<string, Run[]>, beside: string): void {
  const names = Object.keys(runs);
  for (const name of names) {
    const rs = runs[name];
    out[`${name} req/s`] = +median(rs.map((x) => x.r.rps)).toFixed(1);
    out[`${name} p99 ms`] = Math.round(median(rs.map((x) => x.r.p99ms)));
    out[`${name} sift main-thread CPU µs/request`] = Math.round(median(rs.map((x) => x.mainUs)));
    out[`${name} ${beside} CPU µs/request`] = Math.round(median(rs.map((x) => x.besideUs)));
    out[`${name} errors`] = rs.reduce((n, x) => n + x.r.errors, 0);
  }
  const [base, other] = names;
  out[`${other} / ${base} req/s, median of the rounds'`] = +median(
    runs[other].map((x, i) => x.r.rps / runs[base][i].r.rps),
  ).toFixed(2);
}

export async function benchReach(): Promise<Record<string, number | string>> {
  const fx = await site();
  const proxy = await startTinyproxy('127.0.0.6');
  const proxyPid = Number(
    fs.readdirSync('/proc').find((p) => /^\d+$/.test(p) && isTinyproxy(Number(p), proxy.url)),
  );
  const { app, url } = await startSift({
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_PROXIES: `bench=${proxy.url}`,
    SIFT_FLEET_RENDER_CONCURRENCY: '8',
  });
  const out: Record<string, number | string> = {};
  try {
    out['rounds'] = `${ROUNDS} alternating rounds of ${SECONDS} s, medians`;
    const renderer = app.get(Renderer, { strict: false });
    // BENCH_PARTS=actions or proxies runs one of the two.
    const parts = process.env.BENCH_PARTS?.split(',') ?? ['actions', 'proxies'];
    if (parts.includes('actions')) await actionRounds(url, fx.origin, renderer, out);
    if (parts.includes('proxies')) await proxyRounds(url, fx.origin, proxyPid, out);
  } finally {
    await app.close();
    await proxy.stop();
    fx.server.close();
  }
  return out;
}

async function actionRounds(
  url: string,
  origin: string,
  renderer: Renderer,
  out: Record<string, number | string>,
): Promise<void> {
  const click = { type: 'click', selector: '#more' };
  const actions = [click, click, click, { type: 'scroll', direction: 'down' }, { type: 'scrape' }];
  const rendered = await rounds(
    url,
    {
      'render (no actions)': fetchOf({ url: `${origin}/feed`, render: 'always' }),
      'render + 5 actions': fetchOf({ url: `${origin}/feed`, actions }),
    },
    2,
    () => renderer.processes(),
  );
  report(out, rendered, 'Chromium');
}

async function proxyRounds(
  url: string,
  origin: string,
  proxyPid: number,
  out: Record<string, number | string>,
): Promise<void> {
  const proxied = await rounds(
    url,
    {
      direct: fetchOf({ url: `${origin}/article` }),
      'through tinyproxy': fetchOf({ url: `${origin}/article`, proxy: 'bench' }),
    },
    8,
    () => (proxyPid ? [proxyPid] : []),
  );
  report(out, proxied, 'tinyproxy');
}

/** Whether the process is the tinyproxy started for `url` (its config file names the port). */
function isTinyproxy(pid: number, url: string): boolean {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const conf = argv[0].endsWith('tinyproxy') ? argv[argv.indexOf('-c') + 1] : undefined;
    return conf !== undefined && fs.readFileSync(conf, 'utf8').includes(`Port ${new URL(url).port}`);
  } catch {
    return false;
  }
}
