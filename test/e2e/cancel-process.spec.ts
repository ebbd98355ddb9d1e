import { spawn, type ChildProcess } from 'node:child_process';
import { createPgDatabase } from '../support/backends';
import { Fixture, html, send } from '../support/fixture';
import { kill, startSiftProcess, type SiftProcess } from '../support/process';
import { idle, waitUntil } from '../support/wait';

/**
 * A cancel always lands. Three sift processes on one PostgreSQL database work a job of
 * 10,000 slow pages with both cores busy (two spinning processes beside them); DELETE sent to each
 * instance in turn answers 200 within 2 s, never a 503 from lock waits, and no fetch of the job
 * starts more than 1 s after the answer (counted at the site). The job stays cancelled, its
 * events without a gap.
 */
const TOKEN = 'cancel-test-token-0123456789';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const TARGETS = 10_000;

describe('a cancel lands on any of three instances under load', () => {
  let pg: { url: string; drop: () => Promise<void> };
  let fx: Fixture;
  let procs: SiftProcess[] = [];
  const hogs: ChildProcess[] = [];
  /** When each request of each run reached the site (ms since the epoch). */
  const started = new Map<string, number[]>();

  beforeAll(async () => {
    pg = await createPgDatabase();
    fx = await new Fixture({
      '/slow/*': (req, res) => {
        const run = req.url!.split('/')[2];
        const list = started.get(run) ?? [];
        list.push(Date.now());
        started.set(run, list);
        setTimeout(() => send(200, 'text/html', html(`<p>page ${req.url}</p>`))(req, res), 50);
      },
    }).start();
    const env = {
      SIFT_DATABASE_URL: pg.url,
      SIFT_TOKENS: `${TOKEN}:ops:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: '32',
      SIFT_PER_HOST_CONCURRENCY: '96', // over all three instances together
    };
    procs = await Promise.all([0, 1, 2].map(() => startSiftProcess(env)));
    // Both cores busy beside the instances.
    for (let i = 0; i < 2; i++)
      hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }, 120_000);

  afterAll(async () => {
    for (const h of hogs) h.kill('SIGKILL');
    for (const p of procs) await kill(p, 'SIGKILL');
    await fx?.stop();
    await pg?.drop();
  }, 60_000);

  it.each([0, 1, 2])(
    'a cancel sent to instance %i answers 200 within 2 s and stops the job within a second',
    async (run) => {
      const targets = Array.from({ length: TARGETS }, (_, i) => ({ url: fx.url(`/slow/${run}/${i}`) }));
      const submitTo = procs[(run + 1) % 3];
      const sub = await fetch(`${submitTo.url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ targets }),
      });
      expect(sub.status).toBe(202);
      const { id } = (await sub.json()) as { id: string };
      // Every instance is working the job.
      await waitUntil(
        () => ((started.get(String(run))?.length ?? 0) >= 150 ? true : undefined),
        'the job to be well under way',
        60_000,
      );
      const asked = Date.now();
      const r = await fetch(`${procs[run].url}/v1/batch/${id}`, { method: 'DELETE', headers: H });
      const answered = Date.now();
      const body = (await r.json()) as { status: string; error?: unknown };
      expect([r.status, body.status]).toEqual([200, 'cancelled']);
      // The bound (a cancel once took 6.2 s and a 503; 0.5-0.8 s measured here): bench/cancel times it.
      expect(answered - asked).toBeLessThan(2000);
      // Fetches of the job that start more than a second after the answer: none, in a window
      // that goes on 1.5 s past that second (the site answers each fetch in 50 ms).
      await idle(2500, 'a window in which a fetch started late would show');
      const late = (started.get(String(run)) ?? []).filter((t) => t > answered + 1000);
      expect(late).toEqual([]);
      for (const p of procs) {
        const v = (await (await fetch(`${p.url}/v1/batch/${id}`, { headers: H })).json()) as {
          status: string;
          targets_done: number;
          targets_cancelled: number;
        };
        expect([v.status, v.targets_done + v.targets_cancelled]).toEqual(['cancelled', TARGETS]);
      }
      const events = (await (
        await fetch(`${procs[0].url}/v1/batch/${id}/events?limit=1000`, { headers: H })
      ).json()) as { events: { seq: number; type: string }[] };
      expect(events.events.map((e) => e.seq)).toEqual(events.events.map((_, i) => i + 1));
      expect(events.events.at(-1)?.type).toBe('batch.cancelled');
    },
    180_000,
  );
});
