/**
 * bench/batch: a 10,000-target job against a local fixture of 20 KB html pages, sift (a real child
 * process) next to a plain script doing the same fetch + extraction at the same concurrency, in the
 * same run; sift's peak RSS; the submit latency; NDJSON of every result and the RSS it costs.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { extractHtml } from '../src/fetch/extract';
import { kill, startSiftProcess } from '../test/support/process';

const N = Number(process.env.BENCH_TARGETS ?? 10_000);
const CONCURRENCY = 16;
const TOKEN = 'bench-batch-token';

function page(i: number): string {
  const p = (k: number) =>
    `<p>Paragraph ${k} of page ${i}. Sift turns pages like this one into clean markdown, text or html, with enough words to be an article.</p>`;
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><nav><a href="/">Home</a></nav><article><h1>Page ${i}</h1>${Array.from({ length: 130 }, (_, k) => p(k)).join('\n')}</article><footer>footer</footer></body></html>`;
}

/** CPU seconds a process has used, all its threads (utime + stime). */
function cpuS(pid: number): number {
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
  const events = [
    'batch.queued',
    'batch.running',
    'target.done',
    'target.failed',
    'batch.done',
    'batch.partial',
    'batch.failed',
    'batch.cancelled',
    'batch.requeued',
  ];
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
  const server = http.createServer((req, res) => {
    const i = Number((req.url ?? '/0').split('/').pop()) || 0;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(i));
  });
  server.keepAliveTimeout = 60_000; // idle keep-alive sockets closing under the client: not what is measured
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const out: Record<string, number | string> = { 'page size bytes': Buffer.byteLength(page(1)), targets: N };

  // The plain script: the same fetch + markdown extraction, CONCURRENCY loops, no storage.
  let next = 0;
  let t = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const u = `${origin}/s/${next++}`;
        const r = await request(u);
        extractHtml(await r.body.text(), u, 'markdown');
      }
    }),
  );
  const scriptTps = N / ((performance.now() - t) / 1000);

  const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-')), 'sift.db');
  const sift = await startSiftProcess({
    SIFT_DB: db,
    SIFT_TOKENS: `${TOKEN}:bench:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_RUNNER_CONCURRENCY: String(CONCURRENCY),
    SIFT_PER_HOST_CONCURRENCY: String(CONCURRENCY),
    ...(process.env.SIFT_EXTRACT_WORKERS ? { SIFT_EXTRACT_WORKERS: process.env.SIFT_EXTRACT_WORKERS } : {}),
  });
  const pid = sift.child.pid!;
  const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  try {
    const body = JSON.stringify({
      targets: Array.from({ length: N }, (_, i) => ({ url: `${origin}/b/${i}` })),
    });
    t = performance.now();
    const sub = await request(`${sift.url}/v1/batch`, { method: 'POST', headers: H, body });
    const job = (await sub.body.json()) as { id: string };
    out['submit latency ms (10,000 targets, 202 after commit)'] = +(performance.now() - t).toFixed(1);
    let view: { status: string; targets_done: number } = { status: 'queued', targets_done: 0 };
    while (view.status === 'queued' || view.status === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      const r = await request(`${sift.url}/v1/batch/${job.id}`, { headers: H });
      view = (await r.body.json()) as typeof view;
    }
    const siftTps = N / ((performance.now() - t) / 1000);
    out['job status'] = view.status;
    out['sift targets/s'] = +siftTps.toFixed(1);
    out['plain script targets/s'] = +scriptTps.toFixed(1);
    out['sift/script ratio (goal >= 1.0)'] = +(siftTps / scriptTps).toFixed(2);
    out['sift peak RSS MB (goal < 300)'] = Math.round(memKb(pid, 'VmHWM') / 1024);

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
    server.close();
  }
  return out;
}
