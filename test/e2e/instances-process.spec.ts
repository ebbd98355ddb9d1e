import { Client } from 'pg';
import { createPgDatabase } from '../support/backends';
import { Fixture, html, send, slowArticle } from '../support/fixture';
import { kill, startSiftProcess, waitForJobIn, type SiftProcess } from '../support/process';
import { waitUntil } from '../support/wait';

const TOKEN = 'instances-test-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

interface View {
  status: string;
  error: string;
  targets_done: number;
  targets_failed: number;
}

/**
 * Three real sift processes on one PostgreSQL database; one is killed with SIGKILL mid-job. The
 * survivors find it lost after SIFT_INSTANCE_TTL_S and recover its targets by each job's policy.
 */
describe('three processes on one PostgreSQL database, one killed', () => {
  let pg: { url: string; drop: () => Promise<void> };
  let fx: Fixture;
  let procs: SiftProcess[] = [];
  /**
   * Requests to /hold/*: answered when the test lets them go; `closed` counts those the client
   * dropped, and `open` says whether this one still waits (a request dropped early, on a loaded
   * machine, and sent again is in the list twice).
   */
  const held: { path: string; let_go: () => void; open: boolean }[] = [];
  const closed = new Set<string>();

  beforeAll(async () => {
    pg = await createPgDatabase();
    fx = await new Fixture({
      '/r/*': slowArticle(5),
      '/f/*': (req, res) =>
        setTimeout(() => send(200, 'text/html', html(`<p>${req.url}</p>`))(req, res), 1000),
      '/hold/*': (req, res) => {
        const h = {
          path: req.url!,
          let_go: () => send(200, 'text/html', html('<p>late</p>'))(req, res),
          open: true,
        };
        held.push(h);
        res.on('close', () => {
          h.open = false;
          if (!res.writableFinished) closed.add(req.url!);
        });
      },
    }).start();
  });
  afterAll(async () => {
    for (const h of held) h.let_go();
    for (const p of procs) await kill(p, 'SIGKILL');
    await fx.stop();
    await pg.drop();
  }, 60_000);

  let envOf: Record<string, string> = {};

  it('a resume job finishes on the survivors with every result once; a fail job fails instance_lost', async () => {
    const env = {
      SIFT_DATABASE_URL: pg.url,
      SIFT_TOKENS: `${TOKEN}:ops:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: '16',
      SIFT_PER_HOST_CONCURRENCY: '48', // over all three instances together
      SIFT_HEARTBEAT_S: '1',
      SIFT_INSTANCE_TTL_S: '3',
    };
    envOf = env;
    procs = await Promise.all([0, 1, 2].map(() => startSiftProcess(env)));
    const [a, b, c] = procs;
    const submit = async (p: SiftProcess, body: object) =>
      (await (
        await fetch(`${p.url}/v1/batch`, { method: 'POST', headers: H, body: JSON.stringify(body) })
      ).json()) as {
        id: string;
      };
    const resume = await submit(a, {
      targets: Array.from({ length: 3000 }, (_, i) => ({ url: fx.url(`/r/${i}`) })),
      on_restart: 'resume',
      options: { format: 'text' },
    });
    const failing = await submit(b, {
      targets: Array.from({ length: 500 }, (_, i) => ({ url: fx.url(`/f/${i}`) })),
      on_restart: 'fail',
    });
    // Killed while it holds targets of both jobs, with a fifth of the resume job done.
    const cId = ((await (await fetch(`${c.url}/healthz`)).json()) as { instance: string }).instance;
    const watch = new Client({ connectionString: pg.url });
    await watch.connect();
    const held = async (jobId: string) =>
      (
        await watch.query(
          `SELECT count(*)::int AS n FROM batch_target WHERE job_id = $1 AND holder = $2 AND status = 'running'`,
          [jobId, cId],
        )
      ).rows[0].n as number;
    watch.on('error', () => undefined);
    let heldAtKill = { resume: 0, failing: 0 };
    try {
      await waitForJobIn<View>(a, resume.id, H, (v) => v.targets_done >= 300);
      // Frozen first (SIGSTOP), so what it holds cannot change between the look and the kill.
      heldAtKill = await waitUntil(async () => {
        c.child.kill('SIGSTOP');
        const n = { resume: await held(resume.id), failing: await held(failing.id) };
        if (n.resume > 0 && n.failing > 0) return n;
        c.child.kill('SIGCONT');
        return undefined;
      }, 'C holding targets of both jobs');
      await kill(c, 'SIGKILL');
    } finally {
      await watch.end();
    }

    const done = await waitForJobIn<View>(
      b,
      resume.id,
      H,
      (v) => v.status !== 'running' && v.status !== 'queued',
      120_000,
    );
    expect(done).toMatchObject({ status: 'done', targets_done: 3000, targets_failed: 0 });
    const failed = await waitForJobIn<View>(a, failing.id, H, undefined, 60_000);
    expect(failed).toMatchObject({ status: 'failed', error: 'instance_lost' });

    const db = new Client({ connectionString: pg.url });
    await db.connect();
    try {
      const counts = await db.query(
        `SELECT count(*) FILTER (WHERE status = 'done' AND result IS NOT NULL)::int AS done,
                count(*)::int AS total FROM batch_target WHERE job_id = $1`,
        [resume.id],
      );
      expect(counts.rows[0]).toEqual({ done: 3000, total: 3000 });
      for (const id of [resume.id, failing.id]) {
        const seqs = (
          await db.query('SELECT seq FROM batch_event WHERE job_id = $1 ORDER BY seq', [id])
        ).rows.map((r: { seq: number }) => r.seq);
        expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      }
      // The fail job keeps every result finished before the loss.
      const kept = await db.query(
        `SELECT count(*)::int AS n FROM batch_target WHERE job_id = $1 AND status = 'done' AND result IS NOT NULL`,
        [failing.id],
      );
      expect(kept.rows[0].n).toBe(failed.targets_done - failed.targets_failed);
      const requeued = await db.query(
        `SELECT data FROM batch_event WHERE job_id = $1 AND type = 'batch.requeued'`,
        [resume.id],
      );
      expect(requeued.rows).toHaveLength(1);
      expect(JSON.parse(requeued.rows[0].data)).toMatchObject({
        policy: 'resume',
        targets_reset: heldAtKill.resume,
      });
    } finally {
      await db.end();
    }
    // Fetched twice: only what the killed instance held.
    const again = Array.from({ length: 3000 }, (_, i) => fx.hitCount(`/r/${i}`)).filter((n) => n > 1);
    expect(again.length).toBeLessThanOrEqual(heldAtKill.resume);
    expect(Array.from({ length: 3000 }, (_, i) => fx.hitCount(`/r/${i}`)).every((n) => n >= 1)).toBe(true);
  }, 180_000);

  it('a cancel on one process stops, within a second, the fetches the others started; its stream sees their events', async () => {
    // The two survivors of the test above, and a third started now.
    const alive = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    const env = envOf;
    const [a, b] = alive;
    const d = await startSiftProcess(env);
    procs.push(d);
    const ids = await Promise.all(
      [b, d].map(
        async (p) => ((await (await fetch(`${p.url}/healthz`)).json()) as { instance: string }).instance,
      ),
    );
    const sub = (await (
      await fetch(`${a.url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({
          // Held answers must not time out however slow the machine is.
          options: { timeout_ms: 120000 },
          targets: Array.from({ length: 120 }, (_, i) => ({ url: fx.url(`/hold/${i}`) })),
        }),
      })
    ).json()) as { id: string };
    // An event stream on A, open while B and D work.
    const stream = fetch(`${a.url}/v1/batch/${sub.id}/events`, {
      headers: { ...H, accept: 'text/event-stream' },
    }).then((r) => r.text());
    const watch = new Client({ connectionString: pg.url });
    await watch.connect();
    try {
      await waitUntil(async () => {
        const r = await watch.query(
          `SELECT holder, count(*)::int AS n FROM batch_target WHERE job_id = $1 AND status = 'running' GROUP BY holder`,
          [sub.id],
        );
        const by = new Map(r.rows.map((x: { holder: string; n: number }) => [x.holder, x.n]));
        return ids.every((id) => (by.get(id) ?? 0) > 0) ? true : undefined;
      }, 'B and D fetching');
    } finally {
      await watch.end();
    }
    // B and D write events A's stream must show: let a few answers go before the cancel.
    // Six answers to requests still waiting (one dropped early would answer nobody). A target is
    // marked running when it is claimed, before its request reaches the fixture: wait for six there.
    await waitUntil(() => (held.filter((h) => h.open).length >= 6 ? true : undefined), 'six requests held');
    const six = held.filter((h) => h.open).slice(0, 6);
    for (const h of six) {
      held.splice(held.indexOf(h), 1);
      h.let_go();
    }
    await waitUntil(async () => {
      const v = (await (await fetch(`${a.url}/v1/batch/${sub.id}`, { headers: H })).json()) as View;
      return v.targets_done >= 6 ? true : undefined;
    }, 'six results');
    const inFlight = held.map((h) => h.path);
    const cancel = await fetch(`${a.url}/v1/batch/${sub.id}`, { method: 'DELETE', headers: H });
    expect(cancel.status).toBe(200);
    // Every fetch B and D had open is dropped by them within a second.
    await waitUntil(
      () => (inFlight.every((p) => closed.has(p)) ? true : undefined),
      'the fetches aborted',
      1000,
    );
    const text = await stream;
    expect((text.match(/event: target\.done\n/g) ?? []).length).toBe(6);
    expect(text).toMatch(/event: batch\.cancelled\n/);
  }, 60_000);
});
