/**
 * bench/tokens: what token counts and chunks cost per batch target, on bench/batch's fresh 17 KB
 * article pages. One sift process runs jobs of ROUND targets in alternating rounds: the plain job
 * (markdown), the same asking `tokens`, asking "chunks" (the markdown in pieces instead of whole),
 * and asking both markdown and "chunks" (two texts a target: what the second costs). Each cost is
 * the median of the rounds' ratios to the same round's plain job. The ways differ only outside the
 * extraction workers (each extracts the same pages in the same formats), whose CPU varies most
 * between rounds: so each cost is also given as the CPU a way adds outside them (main thread, GC
 * and other helpers) over the same round's plain job, in % of that job's whole CPU per target,
 * beside each way's extraction CPU (equal ways, as it must be). With BENCH_TOKENS_BASELINE
 * (another build's dist/src/main.js, one without token counts) a process of that build runs the
 * plain job in the same rounds: what the change costs a job that asks neither. Then the count
 * alone: o200k_base over the markdown sift wrote for such pages, in this process, per page.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { countTokens } from '../src/common/tokens';
import { prng } from '../test/support/prng';
import { kill, NODE_FLAGS, startSiftProcess, type SiftProcess } from '../test/support/process';
import { byKind, cpuS, runJob, startServer, threadCpu } from './batch';

const ROUND = Number(process.env.BENCH_ROUND_TARGETS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const TOKEN = 'bench-tokens-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function start(main?: string): Promise<SiftProcess> {
  const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-')), 'sift.db');
  const env = {
    SIFT_DB: db,
    SIFT_TOKENS: `${TOKEN}:bench:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_RUNNER_CONCURRENCY: '16',
    SIFT_PER_HOST_CONCURRENCY: '16',
  };
  return main ? startSiftProcess(env, NODE_FLAGS, main) : startSiftProcess(env);
}

export async function benchTokens(): Promise<Record<string, number | string>> {
  const { origin, child: server } = await startServer();
  const baselineMain = process.env.BENCH_TOKENS_BASELINE;
  const sift = await start();
  const baseline = baselineMain ? await start(baselineMain) : undefined;
  const out: Record<string, number | string> = {};
  try {
    const ways: [string, SiftProcess, Record<string, unknown> | undefined][] = [
      ['plain', sift, undefined],
      ['tokens asked', sift, { tokens: true }],
      ['chunks asked', sift, { formats: ['chunks'] }],
      ['markdown and chunks asked', sift, { formats: ['markdown', 'chunks'] }],
      ...(baseline
        ? [['baseline build, plain', baseline, undefined] as [string, SiftProcess, undefined]]
        : []),
    ];
    for (const [name, p, options] of ways) {
      const warm = Array.from({ length: 300 }, (_, i) => `${origin}/warm/${name}/${i}`);
      await runJob(p.url, H, warm, options);
    }
    const runs = new Map<
      string,
      { tps: number; cpuMs: number; mainMs: number; outsideMs: number; extractMs: number }[]
    >(ways.map(([n]) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with the next way, so none is always first.
      for (let k = 0; k < ways.length; k++) {
        const [name, p, options] = ways[(round + k) % ways.length];
        const urls = Array.from({ length: ROUND }, (_, i) => `${origin}/${name}/${round}/${i}`);
        const pid = p.child.pid!;
        const c0 = cpuS(pid);
        const t0 = threadCpu(pid);
        const run = await runJob(p.url, H, urls, options);
        if (run.status !== 'done') throw new Error(`bench/tokens: the job ended ${run.status}`);
        const kinds = byKind(pid, t0, threadCpu(pid), ROUND);
        runs.get(name)!.push({
          tps: ROUND / run.seconds,
          cpuMs: ((cpuS(pid) - c0) * 1000) / ROUND,
          mainMs: kinds.main,
          outsideMs: kinds.main + kinds['GC and other helpers'],
          extractMs: kinds['extraction workers'],
        });
      }
    }
    out['targets per round, rounds'] = `${ROUND}, ${ROUNDS} (alternating, medians)`;
    for (const [name] of ways) {
      const r = runs.get(name)!;
      out[`${name}: targets/s`] = +median(r.map((x) => x.tps)).toFixed(1);
      out[`${name}: CPU ms/target (whole process)`] = +median(r.map((x) => x.cpuMs)).toFixed(2);
      out[`${name}: CPU ms/target (main thread)`] = +median(r.map((x) => x.mainMs)).toFixed(2);
      out[`${name}: CPU ms/target (extraction workers)`] = +median(r.map((x) => x.extractMs)).toFixed(2);
    }
    const cpu = (name: string) => median(runs.get(name)!.map((x) => x.cpuMs));
    const plain = cpu('plain');
    // Each round's ratio to that round's plain job (the machine drifts between rounds), then their median.
    const over = (name: string) => {
      const ratios = runs.get(name)!.map((x, round) => x.cpuMs / runs.get('plain')![round].cpuMs);
      return +((median(ratios) - 1) * 100).toFixed(1);
    };
    // What a way adds outside the extraction workers, in % of the same round's whole plain target.
    const added = (name: string) => {
      const plains = runs.get('plain')!;
      const ratios = runs
        .get(name)!
        .map((x, round) => (x.outsideMs - plains[round].outsideMs) / plains[round].cpuMs);
      return +(median(ratios) * 100).toFixed(1);
    };
    out['tokens: CPU over plain, % (whole process)'] = over('tokens asked');
    out['chunks: CPU over plain, % (whole process)'] = over('chunks asked');
    out['markdown and chunks: CPU over plain, % (whole process)'] = over('markdown and chunks asked');
    out['tokens: CPU added outside extraction, % of a plain target (goal <= 5)'] = added('tokens asked');
    out['chunks: CPU added outside extraction, % of a plain target (goal <= 5)'] = added('chunks asked');
    out['markdown and chunks: CPU added outside extraction, % of a plain target'] =
      added('markdown and chunks asked');
    if (baseline) {
      out['plain: CPU over the baseline build, % (goal 0)'] = +(
        (plain / cpu('baseline build, plain') - 1) *
        100
      ).toFixed(1);
    }

    // The count alone, on the markdown sift wrote for these pages (fresh pages, as in a job).
    const pages: string[] = [];
    for (let i = 0; i < 200 * ROUNDS; i++) {
      const r = await request(`${sift.url}/v1/fetch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ url: `${origin}/count/${i}` }),
      });
      pages.push(((await r.body.json()) as { content: string }).content);
    }
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const c0 = process.cpuUsage();
      for (const md of pages.slice(r * 200, (r + 1) * 200)) countTokens(md);
      const c = process.cpuUsage(c0);
      rounds.push((c.user + c.system) / 1000 / 200);
    }
    const count = median(rounds);
    out['markdown per page, KB'] = +(
      pages.reduce((n, p) => n + Buffer.byteLength(p), 0) /
      pages.length /
      1024
    ).toFixed(1);
    out['tokens per page'] = countTokens(pages[0]);
    out['count alone: CPU ms/page'] = +count.toFixed(3);
    out['count alone: % of a plain target (goal <= 5)'] = +((count / plain) * 100).toFixed(1);
    // The same pages again after a server's worth of varied text: 1,000 texts of made-up words,
    // most of them several tokens each (what a cache of pieces fills with).
    const rand = prng(11);
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const word = () =>
      Array.from({ length: 4 + Math.floor(rand() * 9) }, () => letters[Math.floor(rand() * 26)]).join('');
    for (let t = 0; t < 1000; t++) countTokens(Array.from({ length: 300 }, word).join(' '));
    const after: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const c0 = process.cpuUsage();
      for (const md of pages.slice(r * 200, (r + 1) * 200)) countTokens(`${md} `);
      const c = process.cpuUsage(c0);
      after.push((c.user + c.system) / 1000 / 200);
    }
    out['count alone after 1,000 varied texts: CPU ms/page'] = +median(after).toFixed(3);
  } finally {
    await kill(sift, 'SIGTERM');
    if (baseline) await kill(baseline, 'SIGTERM');
    server.kill();
  }
  return out;
}
