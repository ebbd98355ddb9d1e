import { Client } from 'pg';
import { createPgDatabase } from '../support/backends';
import { ChangingSite, para } from '../support/changing-site';
import { kill, startSiftProcess, type SiftProcess } from '../support/process';
import { idle, waitUntil } from '../support/wait';

const TOKEN = 'monitors-process-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const PAGES = ['a', 'b', 'c', 'd', 'e'];
const EVERY_S = 2;

interface Run {
  id: string;
  status: string;
  targets_total: number;
  targets_done: number;
  created_at: string;
}

/**
 * Three real sift processes on one PostgreSQL database share one monitor that runs every 2 s: each
 * slot starts at most one run (the database's claim), one instance is SIGKILLed while it holds a
 * run's pages (the survivors finish the run by its policy), then every instance is down for three
 * slots and the slots missed give one run, not three.
 */
describe('a monitor on three processes sharing PostgreSQL', () => {
  let pg: { url: string; drop: () => Promise<void> };
  let db: Client;
  let site: ChangingSite;
  let procs: SiftProcess[] = [];
  let env: Record<string, string>;
  const api = async (p: SiftProcess, method: string, path: string, body?: object) =>
    (await (
      await fetch(`${p.url}${path}`, { method, headers: H, body: body && JSON.stringify(body) })
    ).json()) as any;
  const live = () => procs.find((p) => p.child.exitCode === null && p.child.signalCode === null)!;
  const runsOf = async (id: string): Promise<Run[]> =>
    (await api(live(), 'GET', `/v1/monitors/${id}/runs`)).runs;
  /** The monitor's runs as the database holds them: creation times in Unix ms. */
  const dbRuns = async (id: string) =>
    (
      await db.query<{ created_at: string }>(
        'SELECT created_at FROM batch_job WHERE monitor_id = $1 ORDER BY created_at',
        [id],
      )
    ).rows.map((r) => Math.round(Number(r.created_at) * 1000));
  const fetches = () => site.count(site.bodies) + site.count(site.notModified);
  const start = async () => {
    procs = await Promise.all([0, 1, 2].map(() => startSiftProcess(env)));
  };

  beforeAll(async () => {
    pg = await createPgDatabase();
    db = new Client({ connectionString: pg.url });
    await db.connect();
    site = await new ChangingSite().start();
    PAGES.forEach((p) => site.set(p, para(`page ${p}`)));
    env = {
      SIFT_DATABASE_URL: pg.url,
      SIFT_TOKENS: `${TOKEN}:watcher:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_FLEET_MONITOR_MIN_INTERVAL_S: '1',
      SIFT_MONITOR_TICK_MS: '250',
      SIFT_HEARTBEAT_S: '1',
      SIFT_INSTANCE_TTL_S: '3',
    };
  });
  afterAll(async () => {
    site.release();
    for (const p of procs) await kill(p, 'SIGKILL');
    await db?.end();
    await site?.stop();
    await pg?.drop();
  }, 60_000);

  it("each slot runs once; a killed instance's run ends by its policy; slots missed while all were down give one run", async () => {
    await start();
    const m = await api(procs[0], 'POST', '/v1/monitors', {
      name: 'five pages',
      urls: PAGES.map((p) => site.url(p)),
      every_s: EVERY_S,
    });
    // Refused, the processes' state and output say by whom (a process gone, another on its port).
    if (m.error) {
      const state = procs.map((p) => ({ url: p.url, exit: p.child.exitCode, signal: p.child.signalCode }));
      throw new Error(`${JSON.stringify(m)}: ${JSON.stringify(state)}\n${procs[0].output().slice(-4000)}`);
    }
    const origin = Date.parse(m.next_run_at);
    const slotOf = (at: number) => Math.floor((at - origin) / (EVERY_S * 1000));

    // Runs come on their own, one a slot whichever instance ticks first.
    await waitUntil(
      async () => (await runsOf(m.id)).filter((r) => r.status === 'done').length >= 4 || undefined,
      'four runs',
      30_000,
    );

    // The next run's pages are held at the site; the instance holding some is killed.
    site.holding = true;
    const held = await waitUntil(async () => {
      const r = await db.query<{ holder: string; job_id: string }>(
        "SELECT holder, job_id FROM batch_target WHERE status = 'running' AND holder IS NOT NULL LIMIT 1",
      );
      return site.waiting.length > 0 ? r.rows[0] : undefined;
    }, 'a run held at the site');
    const ids = await Promise.all(
      procs.map(async (p) => (await api(p, 'GET', '/healthz')).instance as string),
    );
    const victim = procs[ids.indexOf(held.holder)];
    expect(victim).toBeDefined();
    const heldByVictim = Number(
      (
        await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM batch_target WHERE job_id = $1 AND holder = $2 AND status = 'running'",
          [held.job_id, held.holder],
        )
      ).rows[0].n,
    );
    await kill(victim, 'SIGKILL');
    site.release();
    // The survivors find the instance lost and fetch its pages again (on_restart resume).
    const cut = await waitUntil(
      async () => {
        const r = await api(live(), 'GET', `/v1/batch/${held.job_id}`);
        return r.status === 'done' ? r : undefined;
      },
      'the cut run to finish',
      30_000,
    );
    expect([cut.targets_total, cut.targets_done, cut.targets_failed]).toEqual([5, 5, 0]);
    const results = (await api(live(), 'GET', `/v1/batch/${held.job_id}/results`)).results;
    expect(results.map((r: any) => r.idx)).toEqual([0, 1, 2, 3, 4]);

    // Every instance goes; three slots pass; three new ones start.
    for (const p of procs) await kill(p, 'SIGKILL');
    const before = await dbRuns(m.id);
    // Each run's pages were fetched once (the cut run's held pages once more); a run that a slot
    // began just as the instances were killed, some of them.
    const finished = Number(
      (
        await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM batch_job WHERE monitor_id = $1 AND status = 'done'",
          [m.id],
        )
      ).rows[0].n,
    );
    expect(finished).toBeGreaterThanOrEqual(before.length - 1);
    const fetched = fetches();
    expect(fetched).toBeGreaterThanOrEqual(5 * finished);
    expect(fetched).toBeLessThanOrEqual(5 * before.length + heldByVictim);
    await idle((3 * EVERY_S + 1) * 1000, 'three slots with every instance down');
    const restartAt = Date.now();
    await start();
    await waitUntil(async () => (await runsOf(m.id)).length > before.length || undefined, 'the catch-up run');
    const catchUp = (await dbRuns(m.id)).filter((at) => at >= restartAt);
    const first = Math.min(...catchUp);
    // Within a second of the catch-up run, only a slot that came in that second may add another.
    const boundaries =
      Math.floor((first + 1000 - origin) / (EVERY_S * 1000)) -
      Math.floor((first - origin) / (EVERY_S * 1000));
    expect(catchUp.filter((at) => at < first + 1000).length).toBeLessThanOrEqual(1 + boundaries);

    // Ten runs in all, then: at most one a slot over the whole test; the monitor counted each.
    await waitUntil(async () => (await dbRuns(m.id)).length >= 10 || undefined, 'ten runs', 30_000);
    await Promise.all(procs.map((p) => api(p, 'POST', `/v1/monitors/${m.id}/pause`)));
    await waitUntil(
      async () => (await runsOf(m.id)).every((r) => r.status === 'done') || undefined,
      'the runs to end',
    );
    const all = await dbRuns(m.id);
    const slots = all.map(slotOf);
    expect(new Set(slots).size).toBe(slots.length);
    const view = await api(live(), 'GET', `/v1/monitors/${m.id}`);
    expect(view.runs).toBe(all.length);
    const jobs = await db.query<{ n: string }>('SELECT count(*) AS n FROM batch_job WHERE monitor_id = $1', [
      m.id,
    ]);
    expect(Number(jobs.rows[0].n)).toBe(all.length);
  }, 120_000);
});
