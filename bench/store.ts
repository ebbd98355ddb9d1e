/**
 * bench/store: the batch completion path (updateBatchTarget then evictBatchOldest) on a
 * 10,000-target job with 2 KB results, through BatchStore and through raw better-sqlite3 running the
 * equivalent SQL on a second file database, in the same run; and putBatchTargets of 10,000 targets
 * against a raw bulk insert. The completion path again on PostgreSQL, against raw `pg`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { openDcache, type BatchJob, type BatchTarget } from '../src/dcache';
import { pgDatabase } from './support/pg';

const N = 10_000;
const RESULT = JSON.stringify({ content: 'x'.repeat(2000) });
const T0 = 1_700_000_000;

function tmp(name: string): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-bench-')), name);
}

function targets(jobId: string): BatchTarget[] {
  return Array.from({ length: N }, (_, idx) => ({
    jobId,
    idx,
    url: `http://example.test/page/${idx}`,
    options: '{}',
    status: 'pending',
    result: null,
    error: null,
    hint: null,
  }));
}

function job(id: string): BatchJob {
  return {
    id,
    caller: 'bench',
    callerClass: 'fleet',
    idemKey: '',
    status: 'running',
    error: '',
    targetsTotal: N,
    targetsDone: 0,
    createdAt: T0,
    lease: T0,
    nbytes: 0,
  };
}

async function siftRun(): Promise<{ putMs: number; opsPerS: number }> {
  const d = await openDcache({ path: tmp('sift.db') });
  await d.batch.createBatchJob(job('j'));
  let t = performance.now();
  await d.batch.putBatchTargets('j', targets('j'));
  const putMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < N; i++) {
    await d.batch.updateBatchTarget('j', i, T0 + i, 'done', RESULT, null, null);
    await d.batch.evictBatchOldest(2 ** 40);
  }
  const opsPerS = N / ((performance.now() - t) / 1000);
  await d.close();
  return { putMs, opsPerS };
}

async function rawRun(): Promise<{ putMs: number; opsPerS: number }> {
  // The same schema (migrations, triggers included), then plain better-sqlite3 with the same SQL.
  const file = tmp('raw.db');
  await (await openDcache({ path: file })).close();
  const d = new Database(file);
  d.pragma('journal_mode = WAL');
  d.pragma('synchronous = NORMAL');
  d.prepare(
    `INSERT INTO batch_job (id, caller, caller_class, idem_key, status, targets_total, created_at, lease)
     VALUES ('j', 'bench', 'fleet', '', 'running', ?, ?, ?)`,
  ).run(N, T0, T0);
  const ins = d.prepare(
    `INSERT INTO batch_target (job_id, idx, url, options, status, result, error, hint, code)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let t = performance.now();
  d.transaction(() => {
    for (const x of targets('j')) ins.run('j', x.idx, x.url, x.options, x.status, null, null, null, null);
  })();
  const putMs = performance.now() - t;

  const upd = d.prepare(
    `UPDATE batch_target SET status = ?, result = ?, error = ?, hint = ?, code = ?, updated_at = ?
     WHERE job_id = ? AND idx = ?`,
  );
  const total = d.prepare(`SELECT coalesce(sum(nbytes), 0) AS n FROM batch_job`);
  t = performance.now();
  for (let i = 0; i < N; i++) {
    upd.run('done', RESULT, null, null, null, T0 + i, 'j', i);
    if ((total.get() as { n: number }).n > 2 ** 40) throw new Error('unreachable budget');
  }
  const opsPerS = N / ((performance.now() - t) / 1000);
  d.close();
  return { putMs, opsPerS };
}

/** PostgreSQL: targets in the completion comparison (each costs a round trip or two). */
const N_PG = 5_000;

/** The same completion path through BatchStore on PostgreSQL. */
async function siftRunPg(url: string): Promise<number> {
  const d = await openDcache({ url });
  await d.batch.createBatchJob({ ...job('j'), targetsTotal: N_PG });
  await d.batch.putBatchTargets('j', targets('j').slice(0, N_PG));
  const t = performance.now();
  for (let i = 0; i < N_PG; i++) {
    await d.batch.updateBatchTarget('j', i, T0 + i, 'done', RESULT, null, null);
    await d.batch.evictBatchOldest(2 ** 40);
  }
  const opsPerS = N_PG / ((performance.now() - t) / 1000);
  await d.close();
  return opsPerS;
}

/** The same SQL through one raw `pg` client, on a database with the same schema (and triggers). */
async function rawRunPg(url: string): Promise<number> {
  await (await openDcache({ url })).close();
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(
      `INSERT INTO batch_job (id, caller, caller_class, idem_key, status, targets_total, created_at, lease)
       VALUES ('j', 'bench', 'fleet', '', 'running', $1, $2, $2)`,
      [N_PG, T0],
    );
    await c.query(
      `INSERT INTO batch_target (job_id, idx, url, options, status)
       SELECT 'j', i, 'http://example.test/page/' || i, '{}', 'pending' FROM generate_series(0, $1 - 1) AS i`,
      [N_PG],
    );
    const t = performance.now();
    for (let i = 0; i < N_PG; i++) {
      await c.query({
        name: 'upd',
        text: `UPDATE batch_target SET status = $1, result = $2, error = NULL, hint = NULL, code = NULL, updated_at = $3
               WHERE job_id = $4 AND idx = $5`,
        values: ['done', RESULT, T0 + i, 'j', i],
      });
      const r = await c.query({ name: 'total', text: 'SELECT coalesce(sum(nbytes), 0) AS n FROM batch_job' });
      if (Number(r.rows[0].n) > 2 ** 40) throw new Error('unreachable budget');
    }
    return N_PG / ((performance.now() - t) / 1000);
  } finally {
    await c.end();
  }
}

/** Microseconds per small committed transaction, durable (synchronous = FULL) or not (NORMAL). */
async function commitUs(durable: boolean, n = 300): Promise<number> {
  const d = await openDcache({ path: tmp('commit.db') });
  await d.batch.createBatchJob(job('c'));
  const t = performance.now();
  for (let i = 0; i < n; i++) await d.db.transaction((tx) => tx.jobs.touchBatchJob('c', T0 + i), { durable });
  const us = ((performance.now() - t) * 1000) / n;
  await d.close();
  return us;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchStore(): Promise<Record<string, number>> {
  // One warm-up pass each, then the measured pass, alternating so neither side gets a warmer machine.
  await siftRun();
  await rawRun();
  const sift = await siftRun();
  const raw = await rawRun();
  const out = {
    'completion ops/s (sift)': Math.round(sift.opsPerS),
    'completion ops/s (raw better-sqlite3)': Math.round(raw.opsPerS),
    'completion ratio (goal >= 0.5)': +(sift.opsPerS / raw.opsPerS).toFixed(2),
    'putBatchTargets 10,000 ms (sift)': +sift.putMs.toFixed(1),
    'bulk insert 10,000 ms (raw)': +raw.putMs.toFixed(1),
    'put ratio raw/sift time': +(raw.putMs / sift.putMs).toFixed(2),
  };
  // What "acknowledged means durable" costs a commit: NORMAL and FULL alternated, medians.
  const normal: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < 3; i++) {
    normal.push(await commitUs(false));
    full.push(await commitUs(true));
  }
  Object.assign(out, {
    'commit µs, synchronous NORMAL (per-target results)': Math.round(median(normal)),
    'commit µs, synchronous FULL (submit, cancel, final status)': Math.round(median(full)),
  });
  // PostgreSQL: sift and raw `pg` alternated, each on a fresh database, medians of three.
  const siftPg: number[] = [];
  const rawPg: number[] = [];
  for (let i = 0; i < 3; i++) {
    for (const [runner, into] of [
      [siftRunPg, siftPg],
      [rawRunPg, rawPg],
    ] as const) {
      const db = await pgDatabase();
      try {
        into.push(await runner(db.url));
      } finally {
        await db.drop();
      }
    }
  }
  Object.assign(out, {
    'PostgreSQL completion ops/s (sift)': Math.round(median(siftPg)),
    'PostgreSQL completion ops/s (raw pg)': Math.round(median(rawPg)),
    'PostgreSQL completion ratio (goal >= 0.5)': +(median(siftPg) / median(rawPg)).toFixed(2),
  });
  return out;
}
