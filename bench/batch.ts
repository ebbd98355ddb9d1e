/**
 * bench/batch: sift (a real child process) against the script a user would write instead —
 * fetch, linkedom, Readability and node-html-markdown, 16 in flight, one thread — on the same
 * fresh 17 KB article pages, in alternating rounds (median reported), with CPU per target for the
 * script and for sift by thread kind. Then a 10,000-target job for sift's peak RSS, the submit
 * latency and NDJSON of every result; then the cost of webhooks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Readability } from '@mozilla/readability';
import { parseHTML } from './support/stock-linkedom';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { request } from 'undici';
import { EVENT_TYPES } from '../src/common/job-status';
import { defaultExtractWorkers } from '../src/extract/pool-settings';
import { kill, NODE_FLAGS, startSiftProcess } from '../test/support/process';

const N = Number(process.env.BENCH_TARGETS ?? 10_000);
/** Targets per round of the side-by-side comparison. */
const ROUND = Number(process.env.BENCH_ROUND_TARGETS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Targets of the uncounted first round of each side. */
const WARM_UP = 500;
/** Node options for the sift process, to compare launch settings; by default those of `make run`. */
const NODE_ARGS = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? NODE_FLAGS;
const CONCURRENCY = 16;
const TOKEN = 'bench-batch-token';

/** The page server, in a process of its own: its CPU is neither the script's nor sift's. */
const SERVER = `
const http = require('node:http');
function page(i) {
  const p = (k) => '<p>Paragraph ' + k + ' of page ' + i + '. Sift turns pages like this one into clean markdown, text or html, with enough words to be an article.</p>';
  return '<!doctype html><html><head><title>Page ' + i + '</title></head><body><nav><a href="/">Home</a></nav><article><h1>Page ' + i + '</h1>' + Array.from({ length: 130 }, (_, k) => p(k)).join('\\n') + '</article><footer>footer</footer></body></html>';
}
const server = http.createServer((req, res) => {
  const i = Number((req.url || '/0').split('/').pop()) || 0;
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(page(i));
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

export async function startServer(): Promise<{ origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d) => resolve(String(d).trim())),
  );
  return { origin: `http://127.0.0.1:${port}`, child };
}

/** What a user would write: fetch, parse, Readability, markdown, CONCURRENCY loops, one thread. */
async function plainScript(urls: string[]): Promise<void> {
  const nhm = new NodeHtmlMarkdown();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < urls.length) {
        const u = urls[next++];
        const html = await (await fetch(u)).text();
        const { document } = parseHTML(html);
        const article = new Readability(document as unknown as Document).parse();
        nhm.translate(article?.content ?? '');
      }
    }),
  );
}

/** Extraction worker threads sift starts (SIFT_EXTRACT_WORKERS, else its default). */
const WORKERS = Number(process.env.SIFT_EXTRACT_WORKERS ?? defaultExtractWorkers());

/** CPU seconds of each thread of a process (every thread is named "node": told apart by tid). */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/**
 * CPU ms per target by thread kind between two readings: the main thread (its tid is the pid);
 * the extraction workers (the WORKERS busiest other threads: extraction is most of the work); and
 * the rest (V8's GC and compiler helpers, libuv's pool).
 */
export function byKind(pid: number, before: Map<string, number>, after: Map<string, number>, n: number) {
  const used = [...after].map(([tid, s]) => ({ tid, ms: ((s - (before.get(tid) ?? 0)) * 1000) / n }));
  const main = used.find((u) => u.tid === String(pid))?.ms ?? 0;
  const others = used.filter((u) => u.tid !== String(pid)).sort((a, b) => b.ms - a.ms);
  const workers = others.slice(0, WORKERS).reduce((a, u) => a + u.ms, 0);
  const helpers = others.slice(WORKERS).reduce((a, u) => a + u.ms, 0);
  return { main, 'extraction workers': workers, 'GC and other helpers': helpers } as Record<string, number>;
}

export async function runJob(
  siftUrl: string,
  H: Record<string, string>,
  urls: string[],
  options?: Record<string, unknown>,
): Promise<{ seconds: number; status: string }> {
  const t = performance.now();
  const sub = await request(`${siftUrl}/v1/batch`, {
    method: 'POST',
    headers: H,
    body: JSON.stringify({ targets: urls.map((url) => ({ url })), ...(options ? { options } : {}) }),
  });
  const job = (await sub.body.json()) as { id: string };
  let view = { status: 'queued' };
  while (view.status === 'queued' || view.status === 'running') {
    await new Promise((r) => setTimeout(r, 50));
    view = (await (
      await request(`${siftUrl}/v1/batch/${job.id}`, { headers: H })
    ).body.json()) as typeof view;
  }
  return { seconds: (performance.now() - t) / 1000, status: view.status };
}

/** CPU seconds a process has used, all its threads (utime + stime). */
export function cpuS(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * The cost of webhooks: the same job (fresh URLs each time) with a webhook for every event type
 * (target.done included: one delivery per target) and without, alternating, median of the rounds.
 * Throughput is the time to the job's end; with the webhook, also to its last delivery received.
 */
async function webhookCost(
  siftUrl: string,
  pid: number,
  origin: string,
  H: Record<string, string>,
): Promise<Record<string, number>> {
  const M = Number(process.env.BENCH_WEBHOOK_TARGETS ?? 2000);
  const ROUNDS = 3;
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const events = [...EVENT_TYPES];
  const runs: Record<'plain' | 'hook', { tps: number; cpuMs: number; deliveredS?: number }[]> = {
    plain: [],
    hook: [],
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of ['plain', 'hook'] as const) {
        const before = received;
        const cpu0 = cpuS(pid);
        const t = performance.now();
        const sub = await request(`${siftUrl}/v1/batch`, {
          method: 'POST',
          headers: H,
          body: JSON.stringify({
            targets: Array.from({ length: M }, (_, i) => ({ url: `${origin}/w/${kind}/${round}/${i}` })),
            ...(kind === 'hook' ? { webhook: { url: hookUrl, secret, events } } : {}),
          }),
        });
        const job = (await sub.body.json()) as { id: string };
        let view = { status: 'queued' };
        while (view.status === 'queued' || view.status === 'running') {
          await new Promise((r) => setTimeout(r, 50));
          view = (await (
            await request(`${siftUrl}/v1/batch/${job.id}`, { headers: H })
          ).body.json()) as typeof view;
        }
        const doneS = (performance.now() - t) / 1000;
        if (view.status !== 'done') throw new Error(`webhook bench: the job ended ${view.status}`);
        let deliveredS: number | undefined;
        if (kind === 'hook') {
          while (received - before < M + 3) await new Promise((r) => setTimeout(r, 20));
          deliveredS = (performance.now() - t) / 1000;
        }
        runs[kind].push({ tps: M / doneS, cpuMs: ((cpuS(pid) - cpu0) * 1000) / M, deliveredS });
      }
    }
  } finally {
    receiver.close();
  }
  const plainTps = median(runs.plain.map((r) => r.tps));
  const hookTps = median(runs.hook.map((r) => r.tps));
  return {
    [`webhooks: targets per job (${ROUNDS} alternating rounds, medians)`]: M,
    'webhooks: without, targets/s': +plainTps.toFixed(1),
    'webhooks: every event delivered, targets/s': +hookTps.toFixed(1),
    'webhooks: slowdown % (goal <= 10)': +((1 - hookTps / plainTps) * 100).toFixed(1),
    'webhooks: without, CPU ms/target': +median(runs.plain.map((r) => r.cpuMs)).toFixed(2),
    'webhooks: with, CPU ms/target (sending included)': +median(runs.hook.map((r) => r.cpuMs)).toFixed(2),
    'webhooks: seconds to the last delivery received': +median(runs.hook.map((r) => r.deliveredS!)).toFixed(
      2,
    ),
    'webhooks: deliveries/s': +((M + 3) / median(runs.hook.map((r) => r.deliveredS!))).toFixed(1),
  };
}

function memKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

export async function benchBatch(): Promise<Record<string, number | string>> {
  const { origin, child: server } = await startServer();
  const out: Record<string, number | string> = {};
  const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-')), 'sift.db');
  const sift = await startSiftProcess(
    {
      SIFT_DB: db,
      SIFT_TOKENS: `${TOKEN}:bench:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: String(CONCURRENCY),
      SIFT_PER_HOST_CONCURRENCY: String(CONCURRENCY),
      ...(process.env.SIFT_EXTRACT_WORKERS ? { SIFT_EXTRACT_WORKERS: process.env.SIFT_EXTRACT_WORKERS } : {}),
    },
    NODE_ARGS,
  );
  const pid = sift.child.pid!;
  const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  try {
    // Side by side: the script and sift on fresh URLs of the same pages, alternating, after a
    // round of each that is not counted (code not yet compiled, workers not yet started).
    const warm = Array.from({ length: WARM_UP }, (_, i) => `${origin}/warm/${i}`);
    await plainScript(warm);
    await runJob(sift.url, H, warm);
    const script: { tps: number; cpuMs: number }[] = [];
    const siftRuns: { tps: number; cpuMs: Record<string, number> }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const urls = (who: string) => Array.from({ length: ROUND }, (_, i) => `${origin}/${who}/${round}/${i}`);
      const c0 = process.cpuUsage();
      let t = performance.now();
      await plainScript(urls('s'));
      const c1 = process.cpuUsage(c0);
      script.push({
        tps: ROUND / ((performance.now() - t) / 1000),
        cpuMs: (c1.user + c1.system) / 1000 / ROUND,
      });
      const before = threadCpu(pid);
      t = performance.now();
      const run = await runJob(sift.url, H, urls('b'));
      if (run.status !== 'done') throw new Error(`bench/batch: the job ended ${run.status}`);
      siftRuns.push({
        tps: ROUND / ((performance.now() - t) / 1000),
        cpuMs: byKind(pid, before, threadCpu(pid), ROUND),
      });
    }
    const scriptTps = median(script.map((r) => r.tps));
    const siftTps = median(siftRuns.map((r) => r.tps));
    out[`side by side: targets per round, rounds`] =
      `${ROUND}, ${ROUNDS} (alternating, medians; after ${WARM_UP} of each not counted)`;
    out['plain script (fetch+linkedom+Readability+node-html-markdown) targets/s'] = +scriptTps.toFixed(1);
    out['sift targets/s'] = +siftTps.toFixed(1);
    out['targets/s each round, sift / script'] = siftRuns
      .map((r, i) => `${r.tps.toFixed(0)}/${script[i].tps.toFixed(0)}`)
      .join(' ');
    out['sift/script ratio, each round'] = siftRuns
      .map((r, i) => (r.tps / script[i].tps).toFixed(2))
      .join(' ');
    out['sift/script ratio (goal >= 1.5)'] = +(siftTps / scriptTps).toFixed(2);
    out['plain script CPU ms/target (one thread)'] = +median(script.map((r) => r.cpuMs)).toFixed(2);
    const total = siftRuns.map((r) => Object.values(r.cpuMs).reduce((a, b) => a + b, 0));
    out['sift CPU ms/target, all threads (goal <= script)'] = +median(total).toFixed(2);
    for (const kind of Object.keys(siftRuns[0].cpuMs)) {
      out[`sift CPU ms/target, ${kind}`] = +median(siftRuns.map((r) => r.cpuMs[kind])).toFixed(2);
    }

    // One big job: peak RSS, submit latency, NDJSON.
    const body = JSON.stringify({
      targets: Array.from({ length: N }, (_, i) => ({ url: `${origin}/big/${i}` })),
    });
    let t = performance.now();
    const sub = await request(`${sift.url}/v1/batch`, { method: 'POST', headers: H, body });
    const job = (await sub.body.json()) as { id: string };
    out[`submit latency ms (${N} targets, 202 after commit)`] = +(performance.now() - t).toFixed(1);
    let view: { status: string } = { status: 'queued' };
    while (view.status === 'queued' || view.status === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      view = (await (
        await request(`${sift.url}/v1/batch/${job.id}`, { headers: H })
      ).body.json()) as typeof view;
    }
    out[`${N}-target job`] = `${view.status}, ${(N / ((performance.now() - t) / 1000)).toFixed(1)} targets/s`;
    out[`sift peak RSS MB, ${N}-target job (goal < 200)`] = Math.round(memKb(pid, 'VmHWM') / 1024);

    const rssBefore = memKb(pid, 'VmRSS');
    let peakDuring = rssBefore;
    const poll = setInterval(() => (peakDuring = Math.max(peakDuring, memKb(pid, 'VmRSS'))), 20);
    t = performance.now();
    const nd = await request(`${sift.url}/v1/batch/${job.id}/results`, {
      headers: { ...H, accept: 'application/x-ndjson' },
    });
    let lines = 0;
    let bytes = 0;
    for await (const chunk of nd.body) {
      bytes += (chunk as Buffer).length;
      for (const b of chunk as Buffer) if (b === 10) lines++;
    }
    clearInterval(poll);
    out['NDJSON lines'] = lines;
    out['NDJSON MB'] = +(bytes / 1e6).toFixed(1);
    out['NDJSON seconds'] = +((performance.now() - t) / 1000).toFixed(2);
    out['NDJSON RSS growth MB (goal < 50)'] = Math.round((peakDuring - rssBefore) / 1024);

    Object.assign(out, await webhookCost(sift.url, pid, origin, H));
  } finally {
    await kill(sift, 'SIGTERM');
    server.kill();
  }
  return out;
}
