import { Client } from 'pg';
import { createPgDatabase } from '../support/backends';
import { Fixture, slowArticle } from '../support/fixture';
import { kill, startSiftProcess, waitForJobIn, type SiftProcess } from '../support/process';
import { idle } from '../support/wait';
import { prng } from '../support/prng';

const TOKEN = 'random-instances-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const N = 1500;
const KILLS = 3;

/**
 * The random-SIGKILL test in the shape of several instances: three processes on one PostgreSQL
 * database; at random moments one of them, chosen at random, is killed and a new one started.
 */
describe('SIGKILL of random instances during a 1,500-target job on PostgreSQL', () => {
  let fx: Fixture;
  let pg: { url: string; drop: () => Promise<void> };
  let procs: SiftProcess[] = [];

  beforeAll(async () => {
    fx = await new Fixture({ '/r/*': slowArticle(4) }).start();
    pg = await createPgDatabase();
  });
  afterAll(async () => {
    for (const p of procs) await kill(p, 'SIGKILL');
    await fx.stop();
    await pg.drop();
  }, 60_000);

  it('resume: nothing finished is lost, every target counted once, events gapless', async () => {
    const seed = Number(process.env.SIFT_CRASH_SEED ?? Date.now() % 1e9);
    const rand = prng(seed);
    const env = {
      SIFT_DATABASE_URL: pg.url,
      SIFT_TOKENS: `${TOKEN}:rc:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: '8',
      SIFT_PER_HOST_CONCURRENCY: '24',
      SIFT_HEARTBEAT_S: '1',
      // Heartbeats are whole seconds: a TTL of 2 leaves a live instance less than a second of
      // slack, and one beat a few ms late on a loaded machine had it recovered (one requeue more
      // than the kills). 3 keeps the recovery of the killed ones quick.
      SIFT_INSTANCE_TTL_S: '3',
    };
    procs = await Promise.all([0, 1, 2].map(() => startSiftProcess(env)));
    const targets = Array.from({ length: N }, (_, i) => ({ url: fx.url(`/r/${i}`) }));
    const sub = (await (
      await fetch(`${procs[0].url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ targets, on_restart: 'resume', options: { format: 'text' } }),
      })
    ).json()) as { id: string };

    const db = new Client({ connectionString: pg.url });
    await db.connect();
    db.on('error', () => undefined);
    // One snapshot: the other instances keep writing while it is read.
    const read = async () => {
      await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      try {
        return await snapshot();
      } finally {
        await db.query('COMMIT');
      }
    };
    const snapshot = async () => {
      const rows = (
        await db.query('SELECT idx, status, result FROM batch_target WHERE job_id = $1 ORDER BY idx', [
          sub.id,
        ])
      ).rows as { idx: number; status: string; result: string | null }[];
      const job = (await db.query('SELECT targets_done, nbytes FROM batch_job WHERE id = $1', [sub.id]))
        .rows[0];
      const seqs = (
        await db.query('SELECT seq FROM batch_event WHERE job_id = $1 ORDER BY seq', [sub.id])
      ).rows.map((r: { seq: number }) => r.seq);
      return { rows, job, seqs };
    };
    const check = (s: Awaited<ReturnType<typeof snapshot>>) => {
      expect([seed, s.seqs]).toEqual([seed, s.seqs.map((_, i) => i + 1)]);
      const done = s.rows.filter((r) => r.status === 'done' || r.status === 'failed').length;
      expect([seed, Number(s.job.targets_done)]).toEqual([seed, done]);
      expect(Number(s.job.nbytes)).toBe(s.rows.reduce((n, r) => n + Buffer.byteLength(r.result ?? ''), 0));
    };

    try {
      let prev = await read();
      for (let k = 0; k < KILLS; k++) {
        await idle(300 + Math.floor(rand() * 900), 'a moment picked at random to crash an instance at');
        const victim = Math.floor(rand() * procs.length);
        await kill(procs[victim], 'SIGKILL');
        const now = await read();
        check(now);
        // Every result finished before is still there, unchanged.
        for (const r of prev.rows) if (r.status === 'done') expect(now.rows[r.idx].result).toBe(r.result);
        expect(now.seqs.slice(0, prev.seqs.length)).toEqual(prev.seqs);
        prev = now;
        procs[victim] = await startSiftProcess(env);
      }
      const view = await waitForJobIn<{ status: string; targets_done: number }>(
        procs[0],
        sub.id,
        H,
        undefined,
        90_000,
      );
      expect([seed, view.status, view.targets_done]).toEqual([seed, 'done', N]);
      const last = await read();
      check(last);
      expect(last.rows.every((r) => r.status === 'done' && r.result !== null)).toBe(true);
      for (const r of prev.rows) if (r.status === 'done') expect(last.rows[r.idx].result).toBe(r.result);
      const requeued = (
        await db.query(
          `SELECT count(*)::int AS n FROM batch_event WHERE job_id = $1 AND type = 'batch.requeued'`,
          [sub.id],
        )
      ).rows[0].n;
      expect(requeued).toBeLessThanOrEqual(KILLS);
    } finally {
      await db.end();
    }
  }, 240_000);
});
