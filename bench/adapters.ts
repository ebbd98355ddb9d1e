/**
 * bench/adapters: one cached page read five ways through the same app, in alternating rounds
 * (medians): POST /v1/fetch, Firecrawl's scrape (POST /v2/scrape, /firecrawl/v2/scrape and v1's
 * /firecrawl/v1/scrape), and an MCP `fetch` tool call over POST /mcp. Requests/s, p99 latency and the main thread's CPU per request (sift's thread: the
 * load generator runs in a worker thread of its own).
 */
import * as fs from 'node:fs';
import { fixture } from './fetch';
import { load, startSift, type LoadRequest, type LoadResult } from './support/harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 32;

/** CPU seconds of this process's main thread (utime + stime of its task). */
function mainThreadCpuS(): number {
  const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ 100)
}

/** Each way's goal: its requests/s over /v1/fetch's (SPEC: MCP 0.8, Firecrawl's routes 0.9). */
const GOALS: Record<string, number> = { 'MCP fetch': 0.8 };
const GOAL_FIRECRAWL = 0.9;

/** The five ways, each a request maker the load worker evaluates. */
function ways(pageUrl: string): Record<string, (i: number) => LoadRequest> {
  const make = (req: LoadRequest) =>
    new Function('i', `return ${JSON.stringify(req)}`) as (i: number) => LoadRequest;
  const mcpCall = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'fetch', arguments: { url: pageUrl } },
  };
  return {
    '/v1/fetch': make({ method: 'POST', path: '/v1/fetch', body: JSON.stringify({ url: pageUrl }) }),
    '/v2/scrape': make({
      method: 'POST',
      path: '/v2/scrape',
      body: JSON.stringify({ url: pageUrl, formats: ['markdown'] }),
    }),
    '/firecrawl/v2/scrape': make({
      method: 'POST',
      path: '/firecrawl/v2/scrape',
      body: JSON.stringify({ url: pageUrl, formats: ['markdown'] }),
    }),
    '/firecrawl/v1/scrape': make({
      method: 'POST',
      path: '/firecrawl/v1/scrape',
      body: JSON.stringify({ url: pageUrl, formats: ['markdown'] }),
    }),
    'MCP fetch': make({
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify(mcpCall),
      headers: { accept: 'application/json, text/event-stream' },
    }),
  };
}

export async function benchAdapters(): Promise<Record<string, number | string>> {
  const fx = await fixture();
  const { app, url } = await startSift();
  const out: Record<string, number | string> = {};
  try {
    // BENCH_WAYS (a comma list of names) runs only those, to profile one: `MCP fetch`, `/v2/scrape`.
    const only = process.env.BENCH_WAYS?.split(',');
    const all = Object.fromEntries(
      Object.entries(ways(`${fx.origin}/1`)).filter(([k]) => k === '/v1/fetch' || !only || only.includes(k)),
    );
    // Fill the cache, check each way answers 200, and warm each route's code.
    for (const [name, make] of Object.entries(all)) {
      const r = await load(url, 4, 0.5, make);
      if (r.errors > 0 || !r.statuses['200']) {
        throw new Error(`${name} did not answer 200: ${JSON.stringify(r.statuses)}`);
      }
    }
    const runs: Record<string, { r: LoadResult; cpuUs: number }[]> = Object.fromEntries(
      Object.keys(all).map((k) => [k, []]),
    );
    const names = Object.keys(all);
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with the next way: none always runs first, or last.
      const order = names.map((_, i) => names[(i + round) % names.length]);
      for (const name of order) {
        const make = all[name];
        const cpu0 = mainThreadCpuS();
        const r = await load(url, CONNECTIONS, SECONDS, make);
        const requests = r.rps * SECONDS;
        runs[name].push({ r, cpuUs: ((mainThreadCpuS() - cpu0) * 1e6) / requests });
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const rps = (name: string) => median(runs[name].map((x) => x.r.rps));
    const base = rps('/v1/fetch');
    out['rounds'] = `${ROUNDS} alternating rounds of ${SECONDS} s, ${CONNECTIONS} connections, medians`;
    for (const name of Object.keys(all)) {
      out[`${name} req/s`] = Math.round(rps(name));
      out[`${name} p99 ms`] = +median(runs[name].map((x) => x.r.p99ms)).toFixed(1);
      out[`${name} main-thread CPU µs/request`] = Math.round(median(runs[name].map((x) => x.cpuUs)));
      out[`${name} errors`] = runs[name].reduce((n, x) => n + x.r.errors, 0);
    }
    const cpu = (name: string) => median(runs[name].map((x) => x.cpuUs));
    for (const name of names.filter((k) => k !== '/v1/fetch')) {
      const ratios = runs[name].map((x, i) => x.r.rps / runs['/v1/fetch'][i].r.rps);
      const goal = GOALS[name] ?? GOAL_FIRECRAWL;
      out[`${name} / /v1/fetch req/s, median of the rounds' (goal >= ${goal})`] = +median(ratios).toFixed(2);
      out[`${name} / /v1/fetch req/s, each round`] = ratios.map((r) => r.toFixed(2)).join(' ');
      out[`${name} / /v1/fetch req/s, of the medians`] = +(rps(name) / base).toFixed(2);
      out[`/v1/fetch CPU / ${name} CPU per request`] = +(cpu('/v1/fetch') / cpu(name)).toFixed(2);
    }
  } finally {
    await app.close();
    fx.server.close();
  }
  return out;
}
