/**
 * bench/store: the batch completion path (updateBatchTarget then evictBatchOldest) on a
 * 10,000-target job with 2 KB results, through BatchStore and through raw better-sqlite3 running the
 * equivalent SQL on a second file database, in the same run; and putBatchTargets of 10,000 targets
 * against a raw bulk insert.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { openDcache, type BatchJob, type BatchTarget } from '../src/dcache';

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
    await d.batch.updateBatchTarget({ jobId: 'j', idx: i, now: T0 + i, status: 'done', result: RESULT });
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

/** Microseconds per small committed transaction, durable (synchronous = FULL) or not (NORMAL). */
async function commitUs(durable: boolean, n = 300): Promise<number> {
  const d = await openDcache({ path: tmp('commit.db') });
  await d.batch.createBatchJob(job('c'));
  const t = performance.now();
  for (let i = 0; i < n; i++) await d.batch.transaction((s) => s.touchBatchJob('c', T0 + i), { durable });
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
  return out;
}
