/**
 * bench/scale: the same job on one SQLite instance, then on PostgreSQL with 1, 2 and 3 instances
 * (real child processes on this machine, so the cores are shared: this measures what coordinating
 * through the database costs, not how far N machines go). Throughput, CPU ms per target over all
 * instances, and peak RSS per instance.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { kill, startSiftProcess, type SiftProcess } from '../test/support/process';
import { pgDatabase } from './support/pg';

const N = Number(process.env.BENCH_SCALE_TARGETS ?? 10_000);
const CONCURRENCY = 16;
const TOKEN = 'bench-scale-token';

function page(i: number): string {
  const p = (k: number) =>
    `<p>Paragraph ${k} of page ${i}. Sift turns pages like this one into clean markdown, text or html, with enough words to be an article.</p>`;
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><article><h1>Page ${i}</h1>${Array.from({ length: 130 }, (_, k) => p(k)).join('\n')}</article></body></html>`;
}

/** CPU seconds (user + system, every thread) a process has used. */
function cpuS(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (100/s)
}

/** CPU seconds of every PostgreSQL server process on this machine (backends and the server's own). */
function postgresCpuS(): number {
  let total = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const f = stat.split(') ')[1].split(' ');
      total += (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

async function run(
  label: string,
  origin: string,
  env: Record<string, string>,
  instances: number,
  main?: string,
): Promise<Record<string, number | string>> {
  const procs: SiftProcess[] = [];
  for (let i = 0; i < instances; i++) procs.push(await startSiftProcess(env, undefined, main));
  const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  try {
    const cpu0 = procs.map((p) => cpuS(p.child.pid!));
    const pg0 = postgresCpuS();
    const body = JSON.stringify({
      targets: Array.from({ length: N }, (_, i) => ({ url: `${origin}/${label}/${i}` })),
    });
    const t = performance.now();
    const sub = await request(`${procs[0].url}/v1/batch`, { method: 'POST', headers: H, body });
    const job = (await sub.body.json()) as { id: string };
    let view = { status: 'queued' };
    while (view.status === 'queued' || view.status === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      view = (await (await request(`${procs[0].url}/v1/batch/${job.id}`, { headers: H })).body.json()) as {
        status: string;
      };
    }
    const s = (performance.now() - t) / 1000;
    let claims = 0;
    for (const p of procs) {
      const text = await (await request(`${p.url}/metrics`)).body.text();
      const m = /^sift_claims_total\{what="claims"\} (\d+)/m.exec(text);
      claims += m ? Number(m[1]) : 0;
    }
    const cpu = procs.reduce((n, p, i) => n + cpuS(p.child.pid!) - cpu0[i], 0);
    const pgCpu = postgresCpuS() - pg0;
    if (view.status !== 'done') throw new Error(`${label}: the job ended ${view.status}`);
    return {
      [`${label} targets/s`]: +(N / s).toFixed(1),
      [`${label} CPU ms per target (all instances)`]: +((cpu * 1000) / N).toFixed(2),
      ...(label.includes('postgres')
        ? { [`${label} PostgreSQL server CPU ms per target`]: +((pgCpu * 1000) / N).toFixed(2) }
        : {}),
      [`${label} claims/s (targets per claim)`]: `${(claims / s).toFixed(1)} (${(N / claims).toFixed(1)})`,
      [`${label} peak RSS MB per instance (max)`]: Math.max(...procs.map((p) => peakRssMb(p.child.pid!))),
    };
  } finally {
    for (const p of procs) await kill(p, 'SIGTERM');
  }
}

export async function benchScale(): Promise<Record<string, number | string>> {
  const server = http.createServer((req, res) => {
    const i = Number((req.url ?? '/0').split('/').pop()) || 0;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(i));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = {
    SIFT_TOKENS: `${TOKEN}:bench:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_RUNNER_CONCURRENCY: String(CONCURRENCY),
    SIFT_PER_HOST_CONCURRENCY: String(CONCURRENCY * 3),
  };
  const out: Record<string, number | string> = { targets: N, 'slots per instance': CONCURRENCY };
  // BENCH_SCALE_BASELINE: another build's dist/src/main.js, run right before this tree's in each
  // configuration (the two alternate, so both see the same machine).
  const baseline = process.env.BENCH_SCALE_BASELINE;
  const builds: [string, string | undefined][] = baseline
    ? [
        ['baseline ', baseline],
        ['', undefined],
      ]
    : [['', undefined]];
  try {
    // Which build goes first changes from one configuration to the next: the second of a pair
    // runs on a warmer machine.
    const order = (k: number) => (k % 2 === 0 ? builds : [...builds].reverse());
    for (const [tag, main] of order(0)) {
      const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-scale-')), 'sift.db');
      Object.assign(out, await run(`${tag}sqlite x1`, origin, { ...base, SIFT_DB: db }, 1, main));
    }
    for (const n of [1, 2, 3]) {
      for (const [tag, main] of order(n)) {
        const pg = await pgDatabase();
        try {
          Object.assign(
            out,
            await run(`${tag}postgres x${n}`, origin, { ...base, SIFT_DATABASE_URL: pg.url }, n, main),
          );
        } finally {
          await pg.drop();
        }
      }
    }
    const sqlite = out['sqlite x1 targets/s'] as number;
    out['postgres x2 / sqlite x1 (goal >= 0.8)'] = +(
      (out['postgres x2 targets/s'] as number) / sqlite
    ).toFixed(2);
  } finally {
    server.close();
  }
  return out;
}
