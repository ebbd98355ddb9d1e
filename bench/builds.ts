/**
 * bench/builds: this build against another one (BENCH_BASELINE: that checkout's dist/src/main.js,
 * built there; BENCH_CANDIDATE, another checkout's, stands for this build), on the work of
 * bench/batch, bench/crawl, bench/render and bench/adapters, in one run: a sift process of each
 * build with the same settings, each round starting with the next build, and the median of the
 * rounds' paired ratios. Throughput, and CPU per unit of work of the whole process tree
 * (Chromium's included). Without BENCH_BASELINE this build runs against itself: how far two
 * identical builds differ here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { processTree } from '../src/render/chromium-process';
import { kill, startSiftProcess, type SiftProcess } from '../test/support/process';
import { runJob, startServer as batchSite } from './batch';
import { runCrawl, startServer as crawlSite } from './crawl';
import { fixture } from './fetch';
import { spa } from './render';
import { load } from './support/harness';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TARGETS = Number(process.env.BENCH_BUILDS_TARGETS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
/** BENCH_PARTS: a comma list of batch, crawl, fetch and render (all by default). */
const PARTS = process.env.BENCH_PARTS?.split(',') ?? ['batch', 'crawl', 'fetch', 'render'];
const TOKEN = 'bench-builds-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** CPU seconds of a process and of its children it has reaped. */
function ownAndReaped(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return 0; // ended since the tree was read: its parent's reaped time holds it
  }
}

/** CPU seconds of a process tree: a child that ends between two reads is in its parent's count. */
const treeCpuS = (root: number) => processTree(root).reduce((s, pid) => s + ownAndReaped(pid), 0);

interface Build {
  name: string;
  sift: SiftProcess;
  dir: string;
}

async function startBuild(name: string, main: string | undefined): Promise<Build> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-builds-'));
  const env = {
    SIFT_DB: path.join(dir, 'sift.db'),
    SIFT_TOKENS: `${TOKEN}:bench:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_RUNNER_CONCURRENCY: '16',
    SIFT_PER_HOST_CONCURRENCY: '16',
    SIFT_FLEET_MAX_TARGETS: '10000',
    SIFT_RENDER_PAGES: '2',
    SIFT_FLEET_RENDER_CONCURRENCY: '2',
  };
  const sift = main ? await startSiftProcess(env, undefined, main) : await startSiftProcess(env);
  return { name, sift, dir };
}

/** One unit of a workload on one build: how many units, in how many seconds. */
type Work = (b: Build, round: number) => Promise<{ units: number; seconds: number }>;

/** Runs `work` on each build in alternating rounds (one uncounted warm-up each first). */
async function sideBySide(
  label: string,
  unit: string,
  builds: Build[],
  work: Work,
  out: Record<string, number | string>,
): Promise<void> {
  const runs = new Map(builds.map((b) => [b.name, [] as { rate: number; cpuMs: number }[]]));
  for (const b of builds) await work(b, -1);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < builds.length; k++) {
      const b = builds[(round + k) % builds.length];
      const c0 = treeCpuS(b.sift.child.pid!);
      const { units, seconds } = await work(b, round);
      const cpu = treeCpuS(b.sift.child.pid!) - c0;
      runs.get(b.name)!.push({ rate: units / seconds, cpuMs: (cpu * 1000) / units });
    }
  }
  // Paired by round: a round's two runs see the same machine, whose speed drifts between rounds.
  const [now, before] = builds.map((b) => runs.get(b.name)!);
  const rate = (r: { rate: number }[]) => median(r.map((x) => x.rate));
  const cpu = (r: { cpuMs: number }[]) => median(r.map((x) => x.cpuMs));
  const rates = now.map((r, i) => r.rate / before[i].rate);
  const cpus = now.map((r, i) => r.cpuMs / before[i].cpuMs);
  out[`${label}: ${unit}/s, this build / the other`] = `${rate(now).toFixed(1)} / ${rate(before).toFixed(1)}`;
  out[`${label}: ${unit}/s ratio, each round`] = rates.map((r) => r.toFixed(3)).join(' ');
  out[`${label}: ${unit}/s ratio, median of the rounds'`] = +median(rates).toFixed(3);
  out[`${label}: CPU ms per ${unit.replace(/s$/, '')}, this build / the other`] =
    `${cpu(now).toFixed(2)} / ${cpu(before).toFixed(2)}`;
  out[`${label}: CPU ratio, each round`] = cpus.map((r) => r.toFixed(3)).join(' ');
  out[`${label}: CPU ratio, median of the rounds'`] = +median(cpus).toFixed(3);
  // As it comes: a run of several minutes that fails later keeps what it measured.
  for (const [k, v] of Object.entries(out)) if (k.startsWith(label)) console.error(`  ${k}: ${v}`);
}

export async function benchBuilds(): Promise<Record<string, number | string>> {
  const baseline = process.env.BENCH_BASELINE;
  const candidate = process.env.BENCH_CANDIDATE;
  const out: Record<string, number | string> = {
    'this build': candidate ?? 'this checkout',
    'the other build': baseline ?? 'this build again (BENCH_BASELINE unset)',
    rounds: `${ROUNDS}, alternating which build goes first, medians`,
  };
  const builds = [await startBuild('this', candidate), await startBuild('other', baseline)];
  const batch = await batchSite();
  const crawl = await crawlSite();
  const page = await fixture();
  const app = await spa();
  try {
    if (PARTS.includes('batch'))
      await sideBySide(
        `batch (${TARGETS} fresh 17 KB pages, 16 in flight)`,
        'targets',
        builds,
        async (b, round) => {
          const urls = Array.from({ length: TARGETS }, (_, i) => `${batch.origin}/${b.name}/${round}/${i}`);
          const run = await runJob(b.sift.url, H, urls);
          if (run.status !== 'done') throw new Error(`bench/builds: a batch ended ${run.status}`);
          return { units: TARGETS, seconds: run.seconds };
        },
        out,
      );
    if (PARTS.includes('crawl'))
      await sideBySide(
        `crawl (${TARGETS} pages from the root, 16 in flight)`,
        'pages',
        builds,
        async (b, round) => {
          const { seconds } = await runCrawl(
            b.sift.url,
            H,
            `${crawl.origin}/${b.name[0]}${round + 1}/`,
            TARGETS,
          );
          return { units: TARGETS, seconds };
        },
        out,
      );
    for (const [label, route, body] of [
      ['cached /v1/fetch (32 connections)', '/v1/fetch', {}],
      ['cached /v2/scrape (32 connections)', '/v2/scrape', { formats: ['markdown'] }],
    ] as const) {
      if (!PARTS.includes('fetch')) continue;
      const req = { method: 'POST', path: route, body: JSON.stringify({ url: `${page.origin}/1`, ...body }) };
      const make = `() => (${JSON.stringify(req)})`;
      await sideBySide(
        label,
        'requests',
        builds,
        async (b) => {
          const r = await load(b.sift.url, 32, SECONDS, make, { token: TOKEN });
          if (r.errors > 0 || !r.statuses['200'])
            throw new Error(`bench/builds: ${route} answered ${JSON.stringify(r.statuses)}`);
          return { units: r.rps * SECONDS, seconds: SECONDS };
        },
        out,
      );
    }
    if (PARTS.includes('render'))
      await sideBySide(
        'render: always (a script-built page, 2 at once)',
        'pages',
        builds,
        async (b, round) => {
          let n = 0;
          const started = performance.now();
          const end = Date.now() + SECONDS * 1000;
          await Promise.all(
            [0, 1].map(async (lane) => {
              while (Date.now() < end) {
                const res = await fetch(`${b.sift.url}/v1/fetch`, {
                  method: 'POST',
                  headers: H,
                  body: JSON.stringify({
                    url: `${app.origin}/app/${b.name}-${round}-${lane}-${n++}`,
                    render: 'always',
                    max_age_s: 0,
                  }),
                });
                const env = (await res.json()) as { rendered?: boolean; content?: string };
                if (!env.rendered || !env.content?.includes('Paragraph 3'))
                  throw new Error(`bench/builds: not rendered: ${JSON.stringify(env).slice(0, 200)}`);
              }
            }),
          );
          return { units: n, seconds: (performance.now() - started) / 1000 };
        },
        out,
      );
  } finally {
    for (const b of builds) {
      await kill(b.sift, 'SIGTERM');
      fs.rmSync(b.dir, { recursive: true, force: true });
    }
    batch.child.kill();
    crawl.child.kill();
    page.server.close();
    app.server.close();
  }
  return out;
}
