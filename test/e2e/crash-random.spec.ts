import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Fixture, slowArticle } from '../support/fixture';
import { kill, startSiftProcess, waitForJobIn } from '../support/process';
import { idle } from '../support/wait';
import { prng } from '../support/prng';

const TOKEN = 'random-crash-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const N = 2000;
const KILLS = 4;

interface Row {
  idx: number;
  status: string;
  result: string | null;
}

describe('SIGKILL at random moments during a 2,000-target job', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({
      '/r/*': slowArticle(4),
    }).start();
  });
  afterAll(() => fx.stop());

  it.each(['resume', 'retry'] as const)(
    'on_restart=%s: nothing finished is lost, every target counted once, events gapless',
    async (policy) => {
      const seed = Number(process.env.SIFT_CRASH_SEED ?? Date.now() % 1e9);
      const rand = prng(seed);
      const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-rcrash-')), 'sift.db');
      const env = {
        SIFT_DB: db,
        SIFT_TOKENS: `${TOKEN}:rc:fleet`,
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_RUNNER_CONCURRENCY: '16',
        SIFT_PER_HOST_CONCURRENCY: '16',
      };
      let p = await startSiftProcess(env);
      const targets = Array.from({ length: N }, (_, i) => ({ url: fx.url(`/r/${policy}-${i}`) }));
      const sub = (await (
        await fetch(`${p.url}/v1/batch`, {
          method: 'POST',
          headers: H,
          body: JSON.stringify({ targets, on_restart: policy }),
        })
      ).json()) as { id: string };
      const read = () => {
        const d = new Database(db, { readonly: true });
        const rows = d
          .prepare('SELECT idx, status, result FROM batch_target WHERE job_id = ? ORDER BY idx')
          .all(sub.id) as Row[];
        const job = d.prepare('SELECT * FROM batch_job WHERE id = ?').get(sub.id) as Record<
          string,
          number | string
        >;
        const seqs = (
          d.prepare('SELECT seq FROM batch_event WHERE job_id = ? ORDER BY seq').all(sub.id) as {
            seq: number;
          }[]
        ).map((r) => r.seq);
        const integrity = d.pragma('integrity_check', { simple: true });
        d.close();
        return { rows, job, seqs, integrity };
      };
      const check = (s: ReturnType<typeof read>) => {
        expect(s.integrity).toBe('ok');
        expect(s.seqs).toEqual(s.seqs.map((_, i) => i + 1));
        const done = s.rows.filter((r) => r.status === 'done' || r.status === 'failed').length;
        expect(s.job.targets_done).toBe(done);
        expect(s.job.nbytes).toBe(s.rows.reduce((n, r) => n + Buffer.byteLength(r.result ?? ''), 0));
      };

      let prev = read();
      for (let k = 0; k < KILLS; k++) {
        await idle(150 + Math.floor(rand() * 900), 'a moment picked at random to crash at');
        await kill(p, 'SIGKILL');
        const now = read();
        check(now);
        if (policy === 'resume') {
          // Every result finished before an earlier crash is still there, unchanged.
          for (const r of prev.rows)
            if (r.status === 'done') expect([r.idx, now.rows[r.idx].result]).toEqual([r.idx, r.result]);
        }
        expect(now.seqs.slice(0, prev.seqs.length)).toEqual(prev.seqs);
        prev = now;
        p = await startSiftProcess(env);
      }
      const view = await waitForJobIn<{ status: string; targets_done: number }>(p, sub.id, H);
      await kill(p, 'SIGTERM');
      expect([seed, view.status, view.targets_done]).toEqual([seed, 'done', N]);
      const last = read();
      check(last);
      expect(last.rows.every((r) => r.status === 'done' && r.result !== null)).toBe(true);
      if (policy === 'resume') {
        for (const r of prev.rows) if (r.status === 'done') expect(last.rows[r.idx].result).toBe(r.result);
      }
    },
    180_000,
  );
});
