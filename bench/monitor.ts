/**
 * bench/monitor: a monitor's run of 1,000 unchanged pages, whose site answers each with a 304 to
 * the ETag kept from the run before, against a plain re-fetch of the same pages (a batch job with
 * max_age_s 0 on a copy of the site that sends no validators, so every page comes whole), in
 * alternating rounds (medians). Per page: sift's CPU (the whole process: main thread and
 * extraction workers), the bytes the site sent (headers and bodies), and the run's wall time.
 * The site runs in a child process of its own, so its CPU is not sift's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { MonitorService } from '../src/monitors/monitor.service';
import { BENCH_TOKEN, startSift } from './support/harness';

const PAGES = Number(process.env.BENCH_PAGES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** The site: /v/N with an ETag (304 when it matches), /p/N the same page with none; /stats, /reset. */
const SITE = `
const http = require('node:http');
const words = 'This sentence is here so that the page reads as an article with enough words. '.repeat(4);
const page = (i) => '<!doctype html><html><head><title>Page ' + i + '</title></head><body><article><h1>Page ' + i +
  '</h1>' + Array.from({ length: 30 }, (_, k) => '<p>' + k + ' ' + words + '</p>').join('') + '</article></body></html>';
let bytes = 0, n200 = 0, n304 = 0;
const sockets = new Set();
const written = () => bytes + [...sockets].reduce((n, s) => n + s.bytesWritten, 0);
const server = http.createServer((req, res) => {
  const [, kind, n] = req.url.split('/');
  if (kind === 'stats') return res.end(JSON.stringify({ bytes: written(), n200, n304 }));
  if (kind === 'reset') { bytes = -[...sockets].reduce((n, s) => n + s.bytesWritten, 0); n200 = n304 = 0; return res.end('{}'); }
  if (kind === 'robots.txt') return res.writeHead(404).end();
  const tag = '"p' + n + '"';
  if (kind === 'v' && req.headers['if-none-match'] === tag) { n304++; return res.writeHead(304, { etag: tag }).end(); }
  n200++;
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(kind === 'v' ? { etag: tag } : {}) });
  res.end(page(n));
});
server.on('connection', (s) => { sockets.add(s); s.on('close', () => { bytes += s.bytesWritten; sockets.delete(s); }); });
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

function startSite(): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, ['-e', SITE], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) =>
    child.stdout!.once('data', (d) => resolve({ child, origin: `http://127.0.0.1:${String(d).trim()}` })),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export async function benchMonitor(): Promise<Record<string, number | string>> {
  const site = await startSite();
  const { app, url } = await startSift({ SIFT_MONITOR_TICK_MS: '60000', SIFT_RUNNER_CONCURRENCY: '16' });
  const headers = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
  const api = async (method: string, path: string, body?: object) =>
    (await (
      await fetch(`${url}${path}`, { method, headers, body: body && JSON.stringify(body) })
    ).json()) as any;
  const stats = async () =>
    (await (await fetch(`${site.origin}/stats`)).json()) as { bytes: number; n200: number; n304: number };
  const until = async (id: string) => {
    for (;;) {
      const j = await api('GET', `/v1/batch/${id}`);
      if (j.status !== 'queued' && j.status !== 'running') return j;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const monitors = app.get(MonitorService);
  const urls = (kind: string) => Array.from({ length: PAGES }, (_, i) => `${site.origin}/${kind}/${i}`);
  const m = await api('POST', '/v1/monitors', { name: 'bench', urls: urls('v'), every_s: 3600 });
  /** One run of the monitor: its slot made now (pause, resume), then a tick. */
  const run = async () => {
    await api('POST', `/v1/monitors/${m.id}/pause`);
    await api('POST', `/v1/monitors/${m.id}/resume`);
    if ((await monitors.tick()) !== 1) throw new Error('the monitor did not run');
    return until((await api('GET', `/v1/monitors/${m.id}/runs`)).runs[0].id);
  };
  const plain = async () =>
    until(
      (
        await api('POST', '/v1/batch', {
          targets: urls('p').map((u) => ({ url: u })),
          options: { format: 'markdown', max_age_s: 0 },
        })
      ).id,
    );
  const measure = async (what: () => Promise<{ status: string }>) => {
    await fetch(`${site.origin}/reset`);
    const c0 = cpuMs();
    const t0 = performance.now();
    const job = await what();
    const wall = performance.now() - t0;
    const cpu = cpuMs() - c0;
    const s = await stats();
    if (job.status !== 'done') throw new Error(`a job ended ${job.status}`);
    return { cpu: cpu / PAGES, bytes: s.bytes / PAGES, wall, n304: s.n304, n200: s.n200 };
  };
  try {
    // Warm: the monitor's first run fetches every page whole (each is new), the plain one too.
    await run();
    await plain();
    const r: Record<'monitor' | 'plain', Awaited<ReturnType<typeof measure>>[]> = { monitor: [], plain: [] };
    for (let i = 0; i < ROUNDS; i++) {
      r.monitor.push(await measure(run));
      r.plain.push(await measure(plain));
    }
    const med = (k: 'monitor' | 'plain', f: 'cpu' | 'bytes' | 'wall') => median(r[k].map((x) => x[f]));
    return {
      pages: PAGES,
      'monitor run: 304s / bodies per run': `${r.monitor[0].n304} / ${r.monitor[0].n200}`,
      'monitor run: CPU ms per page': med('monitor', 'cpu').toFixed(3),
      'plain re-fetch: CPU ms per page': med('plain', 'cpu').toFixed(3),
      'monitor run: upstream bytes per page': Math.round(med('monitor', 'bytes')),
      'plain re-fetch: upstream bytes per page': Math.round(med('plain', 'bytes')),
      'monitor run: wall s': (med('monitor', 'wall') / 1000).toFixed(2),
      'plain re-fetch: wall s': (med('plain', 'wall') / 1000).toFixed(2),
    };
  } finally {
    await app.close();
    site.child.kill();
  }
}
