/**
 * bench/cancel: how long `DELETE /v1/batch/{id}` takes to answer for a job being worked, of 1,000
 * and 10,000 slow pages, on one SQLite instance and on three instances sharing PostgreSQL (real
 * processes). Each round submits a job to one instance, waits until its fetches are well under
 * way, and cancels it on another; p50 and max of the answer, answers that were not 200, and
 * fetches of the job that began more than a second after the answer (counted at the site).
 * BENCH_CANCEL_BASELINE: another build's dist/src/main.js, its instances run right before or after
 * this tree's in each configuration.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { kill, startSiftProcess, type SiftProcess } from '../test/support/process';
import { pgDatabase } from './support/pg';

const ROUNDS = Number(process.env.BENCH_CANCEL_ROUNDS ?? 5);
const SIZES = [1_000, 10_000];
const TOKEN = 'bench-cancel-token-0123456789';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
/** Fetches of a job begun before it is cancelled. */
const UNDER_WAY = 100;

/** A site whose pages answer after 50 ms, noting when each job's fetches began. */
async function slowSite() {
  const began = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const job = (req.url ?? '').split('/')[1];
    const list = began.get(job) ?? [];
    list.push(Date.now());
    began.set(job, list);
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><article><p>page ${req.url} of a job being cancelled</p></article></body></html>`);
    }, 50);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    began: (job: string) => began.get(job) ?? [],
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function rounds(
  label: string,
  site: Awaited<ReturnType<typeof slowSite>>,
  procs: SiftProcess[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const size of SIZES) {
    const ms: number[] = [];
    let refused = 0;
    let late = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const tag = `${label.replace(/\W/g, '')}-${size}-${r}`;
      const targets = Array.from({ length: size }, (_, i) => ({ url: `${site.origin}/${tag}/${i}` }));
      const sub = await fetch(`${procs[r % procs.length].url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ targets }),
      });
      const { id } = (await sub.json()) as { id: string };
      while (site.began(tag).length < UNDER_WAY) await new Promise((res) => setTimeout(res, 10));
      const asked = performance.now();
      const res = await fetch(`${procs[(r + 1) % procs.length].url}/v1/batch/${id}`, {
        method: 'DELETE',
        headers: H,
      });
      const took = performance.now() - asked;
      const answered = Date.now();
      await res.arrayBuffer();
      ms.push(took);
      if (res.status !== 200) refused++;
      await new Promise((resolve) => setTimeout(resolve, 2000));
      late += site.began(tag).filter((t) => t > answered + 1000).length;
    }
    const at = `${label} ${size.toLocaleString('en')}`;
    out[`${at} answer p50 ms`] = Math.round(median(ms));
    out[`${at} answer max ms`] = Math.round(Math.max(...ms));
    out[`${at} not 200`] = refused;
    out[`${at} fetches begun > 1 s after`] = late;
  }
  return out;
}

export async function benchCancel(): Promise<Record<string, number | string>> {
  const site = await slowSite();
  const env = {
    SIFT_TOKENS: `${TOKEN}:bench:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_RUNNER_CONCURRENCY: '32',
    SIFT_PER_HOST_CONCURRENCY: '96',
  };
  const baseline = process.env.BENCH_CANCEL_BASELINE;
  const builds: [string, string | undefined][] = baseline
    ? [
        ['baseline ', baseline],
        ['', undefined],
      ]
    : [['', undefined]];
  const out: Record<string, number | string> = { rounds: ROUNDS, 'page delay ms': 50 };
  const configs: [string, number][] = [
    ['sqlite x1', 1],
    ['postgres x3', 3],
  ];
  try {
    for (const [k, [config, n]] of configs.entries()) {
      // The second of a pair runs on a warmer machine: the order changes between configurations.
      for (const [tag, main] of k % 2 === 0 ? builds : [...builds].reverse()) {
        const pg = n > 1 ? await pgDatabase() : undefined;
        const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-cancel-')), 'sift.db');
        const where: Record<string, string> = pg ? { SIFT_DATABASE_URL: pg.url } : { SIFT_DB: db };
        const procs: SiftProcess[] = [];
        try {
          for (let i = 0; i < n; i++)
            procs.push(await startSiftProcess({ ...env, ...where }, undefined, main));
          Object.assign(out, await rounds(`${tag}${config}`, site, procs));
        } finally {
          for (const p of procs) await kill(p, 'SIGKILL');
          await pg?.drop();
        }
      }
    }
  } finally {
    await site.close();
  }
  return out;
}
