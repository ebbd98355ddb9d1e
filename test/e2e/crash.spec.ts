import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Fixture, slowArticle } from '../support/fixture';
import { isTerminalJob } from '../../src/common/job-status';
import { kill, startSiftProcess, waitForJobIn, type SiftProcess } from '../support/process';

const TOKEN = 'crash-test-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const N = 600;

interface TargetRow {
  idx: number;
  status: string;
  result: string | null;
}

/**
 * sift as a real child process on a file database: a job is killed with SIGKILL mid-run, sift
 * starts again on the same file, and the job ends as its restart policy says, losing nothing.
 */
describe('crash and restart (SIGKILL)', () => {
  let fx: Fixture;
  const envFor = (db: string) => ({
    SIFT_DB: db,
    SIFT_TOKENS: `${TOKEN}:crash:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_RUNNER_CONCURRENCY: '16',
    SIFT_PER_HOST_CONCURRENCY: '16',
  });

  beforeAll(async () => {
    fx = await new Fixture({
      '/p/*': slowArticle(15),
    }).start();
  });
  afterAll(() => fx.stop());

  async function api(p: SiftProcess, method: string, route: string, body?: object) {
    const r = await fetch(`${p.url}${route}`, {
      method,
      headers: H,
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json()) as any };
  }

  const waitFor = (p: SiftProcess, id: string, pred: (j: any) => boolean) =>
    waitForJobIn<any>(p, id, H, pred, 30_000);

  function snapshot(db: string, id: string): { targets: TargetRow[]; seqs: number[] } {
    const d = new Database(db, { readonly: true });
    const targets = d
      .prepare('SELECT idx, status, result FROM batch_target WHERE job_id = ? ORDER BY idx')
      .all(id) as TargetRow[];
    const seqs = (
      d.prepare('SELECT seq FROM batch_event WHERE job_id = ? ORDER BY seq').all(id) as { seq: number }[]
    ).map((r) => r.seq);
    d.close();
    return { targets, seqs };
  }

  function checkConsistent(db: string, id: string) {
    const d = new Database(db, { readonly: true });
    const job = d.prepare('SELECT * FROM batch_job WHERE id = ?').get(id) as any;
    const counts = d
      .prepare(
        `SELECT sum(status IN ('done','failed')) AS done, sum(status = 'failed') AS failed,
                coalesce(sum(length(CAST(result AS BLOB))), 0) AS bytes FROM batch_target WHERE job_id = ?`,
      )
      .get(id) as any;
    const seqs = (
      d.prepare('SELECT seq FROM batch_event WHERE job_id = ? ORDER BY seq').all(id) as { seq: number }[]
    ).map((r) => r.seq);
    const integrity = d.pragma('integrity_check', { simple: true });
    d.close();
    expect(integrity).toBe('ok');
    // Every target counted exactly once, nbytes the sum of stored results, events gapless.
    expect(job.targets_done).toBe(counts.done);
    expect(job.targets_failed).toBe(counts.failed);
    expect(job.nbytes).toBe(counts.bytes);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    return job;
  }

  it.each(['fail', 'retry', 'resume'] as const)(
    'on_restart=%s',
    async (policy) => {
      const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-crash-')), 'sift.db');
      let p = await startSiftProcess(envFor(db));
      const targets = Array.from({ length: N }, (_, i) => ({ url: fx.url(`/p/${policy}-${i}`) }));
      const sub = await api(p, 'POST', '/v1/batch', {
        targets,
        on_restart: policy,
        options: { format: 'text' },
      });
      expect(sub.status).toBe(202);
      const id = sub.body.id as string;
      await waitFor(p, id, (j) => j.targets_done >= 150);
      await kill(p, 'SIGKILL');

      const before = snapshot(db, id);
      const doneBefore = before.targets.filter((t) => t.status === 'done');
      expect(doneBefore.length).toBeGreaterThanOrEqual(150);
      expect(doneBefore.length).toBeLessThan(N);
      checkConsistent(db, id);

      p = await startSiftProcess(envFor(db));
      try {
        const end = await waitFor(
          p,
          id,
          (j) => isTerminalJob(j.status) || (policy !== 'fail' && j.targets_done === N),
        );
        const final = policy === 'fail' ? end : await waitFor(p, id, (j) => j.status === 'done');
        const job = checkConsistent(db, id);
        const after = snapshot(db, id);
        if (policy === 'fail') {
          expect(final).toMatchObject({ status: 'failed', error: 'server_restarted', targets_done: N });
          expect(after.targets.filter((t) => t.status === 'done')).toHaveLength(doneBefore.length);
        } else {
          expect(final).toMatchObject({ status: 'done', targets_done: N, targets_failed: 0 });
          expect(job.targets_done).toBe(N);
        }
        // No finished result is lost (retry fetches again, so its results are new but present).
        for (const t of doneBefore) {
          const now = after.targets[t.idx];
          expect(now.status).toBe('done');
          if (policy !== 'retry') expect(now.result).toBe(t.result);
        }
        // The events seen before the crash are still there, continued without a gap.
        expect(after.seqs.slice(0, before.seqs.length)).toEqual(before.seqs);
        const events = (await api(p, 'GET', `/v1/batch/${id}/events`)).body.events as {
          type: string;
          data: { idx?: number };
        }[];
        expect(events[events.length - 1].type).toBe(policy === 'fail' ? 'batch.failed' : 'batch.done');
        if (policy === 'resume') {
          // Each target finished exactly once over both runs.
          const perIdx = new Map<number, number>();
          for (const e of events)
            if (e.type === 'target.done') perIdx.set(e.data.idx!, (perIdx.get(e.data.idx!) ?? 0) + 1);
          expect(perIdx.size).toBe(N);
          expect([...perIdx.values()].every((c) => c === 1)).toBe(true);
        }
      } finally {
        await kill(p, 'SIGTERM');
      }
    },
    120_000,
  );
});
