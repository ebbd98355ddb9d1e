/**
 * bench/search: the search index on each database. 10,000 results of ~10 KB pages (words drawn
 * from a 20,000-word vocabulary with Zipf's frequencies, as text is) are written as the runner
 * writes them (50 a transaction), with and without their index documents, alternating rounds of
 * 1,000: the difference is what indexing costs per result (this process's CPU, and wall time, which
 * holds PostgreSQL's own work). Then 300 queries of one to three words, from common to rare, over
 * the 10,000 indexed pages: p50 and p95 latency.
 */
import { sql } from 'kysely';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDcache, pageDocOf, SearchStore, storedDocOf, type Dcache } from '../src/dcache';
import { pgDatabase } from './support/pg';
import { prng } from '../test/support/prng';

const PAGES = Number(process.env.BENCH_SEARCH_PAGES ?? 10_000);
const ROUND = 1000;
const PER_TX = 50;
const QUERIES = 300;

/** A vocabulary of made-up words and a sampler with Zipf's law (rank r with weight 1/r). */
function vocabulary(random: () => number) {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ser',
    'tun',
    'pra',
    've',
    'dos',
    'qui',
    'nar',
    'bel',
    'os',
    'tri',
    'ga',
  ];
  const words = Array.from({ length: 20_000 }, (_, i) => {
    let w = '';
    for (let n = 2 + (i % 3); n > 0; n--) w += syllables[Math.floor(random() * syllables.length)];
    return `${w}${i % 7 === 0 ? 'ing' : ''}`;
  });
  const cumulative: number[] = [];
  let total = 0;
  for (let r = 1; r <= words.length; r++) cumulative.push((total += 1 / r));
  const pick = () => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo];
  };
  return { words, pick };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];

async function onBackend(backend: 'sqlite' | 'postgres'): Promise<Record<string, number | string>> {
  const random = prng(7);
  const vocab = vocabulary(random);
  const pg = backend === 'postgres' ? await pgDatabase() : undefined;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-')), 'sift.db');
  const d: Dcache = await openDcache(pg ? { url: pg.url } : { path: file });
  const out: Record<string, number | string> = {};
  try {
    const now = 1_800_000_000;
    const runs: Record<'plain' | 'indexed', { cpuMs: number; wallMs: number }[]> = { plain: [], indexed: [] };
    for (let round = 0; round < PAGES / ROUND; round++) {
      const kind = round % 2 === 0 ? 'indexed' : 'plain';
      const id = `bench-${round}`;
      await sql`INSERT INTO batch_job (id, caller, caller_class, idem_key, status, targets_total, created_at, lease)
        VALUES (${id}, 'bench', 'fleet', ${id}, 'running', ${ROUND}, ${now}, ${now})`.execute(d.kysely);
      await sql`INSERT INTO batch_target (job_id, idx, url, options, status, host)
        WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ${ROUND - 1})
        SELECT ${id}, i, 'https://docs.example.com/' || ${id} || '/' || i, '{}', 'running', 'docs.example.com'
        FROM k`.execute(d.kysely);
      const results = Array.from({ length: ROUND }, (_, i) => {
        const words = Array.from({ length: 1500 }, () => vocab.pick());
        return JSON.stringify({
          url: `https://docs.example.com/${id}/${i}`,
          final_url: `https://docs.example.com/${id}/${i}`,
          title: `${vocab.pick()} ${vocab.pick()}`,
          content: words.join(' '),
        });
      });
      // The envelopes the runner holds when it writes (parsed here outside the timing).
      const envelopes = results.map((r) => JSON.parse(r) as object);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let from = 0; from < ROUND; from += PER_TX) {
        await d.db.transaction(async (tx) => {
          for (let i = from; i < from + PER_TX; i++) {
            await tx.q
              .updateTable('batch_target')
              .set({ status: 'done', result: results[i], updated_at: now })
              .where('job_id', '=', id)
              .where('idx', '=', i)
              .execute();
            // The document as the runner gives it, from the envelope it wrote.
            if (kind === 'indexed')
              await SearchStore.indexResult(tx, id, i, pageDocOf(envelopes[i]), now * 1000);
          }
        });
      }
      const c = process.cpuUsage(c0);
      runs[kind].push({
        cpuMs: (c.user + c.system) / 1000 / ROUND,
        wallMs: (performance.now() - t0) / ROUND,
      });
    }
    const med = (k: 'plain' | 'indexed', f: 'cpuMs' | 'wallMs') =>
      pct(
        runs[k].map((r) => r[f]),
        0.5,
      );
    out[`${backend}: result written, ms (CPU / wall)`] =
      `${med('plain', 'cpuMs').toFixed(3)} / ${med('plain', 'wallMs').toFixed(3)}`;
    out[`${backend}: with its index document, ms (CPU / wall)`] =
      `${med('indexed', 'cpuMs').toFixed(3)} / ${med('indexed', 'wallMs').toFixed(3)}`;
    out[`${backend}: indexing per result, ms of wall`] = +(
      med('indexed', 'wallMs') - med('plain', 'wallMs')
    ).toFixed(3);

    // Every page indexed, then the queries.
    for (let round = 1; round < PAGES / ROUND; round += 2) {
      const rows = await d.kysely
        .selectFrom('batch_target')
        .select(['idx', 'result'])
        .where('job_id', '=', `bench-${round}`)
        .execute();
      await d.db.transaction(async (tx) => {
        for (const r of rows)
          await SearchStore.indexResult(tx, `bench-${round}`, r.idx, storedDocOf(r.result!), now * 1000);
      });
    }
    const docs = await sql<{ n: number }>`SELECT count(*) AS n FROM search_doc`.execute(d.kysely);
    out[`${backend}: pages indexed`] = Number(docs.rows[0].n);
    const took: number[] = [];
    let hits = 0;
    for (let q = 0; q < QUERIES; q++) {
      // One to three words, from the common (rank ~10) to the rare (rank ~10,000).
      const n = 1 + (q % 3);
      const words = Array.from({ length: n }, () => vocab.words[Math.floor(10 ** (1 + random() * 3))]);
      const t0 = performance.now();
      const found = await d.search.search({ owner: 'fleet:bench', words, limit: 10 });
      took.push(performance.now() - t0);
      hits += found.length;
    }
    out[`${backend}: search p50 / p95 ms (${QUERIES} queries)`] =
      `${pct(took, 0.5).toFixed(2)} / ${pct(took, 0.95).toFixed(2)}`;
    out[`${backend}: hits per query (limit 10)`] = +(hits / QUERIES).toFixed(1);
  } finally {
    await d.close();
    await pg?.drop();
  }
  return out;
}

export async function benchSearch(): Promise<Record<string, number | string>> {
  return { ...(await onBackend('sqlite')), ...(await onBackend('postgres')) };
}
