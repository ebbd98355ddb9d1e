import { spawn } from 'node:child_process';
import { Client } from 'pg';
import { Fixture, slowArticle } from '../support/fixture';
import { ThrowawayCluster, freePort } from '../support/pg-cluster';
import {
  ROOT,
  ensureBuilt,
  kill,
  spawnSiftProcess,
  startSiftProcess,
  waitForHealthz,
  waitForJobIn,
  type SiftProcess,
} from '../support/process';
import { TcpProxy } from '../support/tcp-proxy';
import { idle, waitUntil } from '../support/wait';

const TOKEN = 'pg-faults-test-token';
/** The instance TTL: an instance whose heartbeat is older is lost (heartbeats every second). */
const TTL_S = 4;
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

interface View {
  status: string;
  error: string;
  targets_done: number;
  targets_failed: number;
}

/**
 * Two real sift processes on a PostgreSQL server of the test's own, each through a TCP proxy the
 * test turns into faults: the server restarted mid-job, every connection cut and refused for 5 s,
 * one instance's connections gone silent for longer than the instance TTL. After each, both
 * processes live, and the job ends once with every result. Then a monitor ticking on both through
 * a restart and refused connections: each slot runs at most once, and the runs go on after.
 */
describe('PostgreSQL faults under two sift processes', () => {
  let cluster: ThrowawayCluster;
  let fx: Fixture;
  let proxies: TcpProxy[] = [];
  let procs: SiftProcess[] = [];
  let db: Client;

  beforeAll(async () => {
    ensureBuilt();
    cluster = await ThrowawayCluster.start();
    fx = await new Fixture({ '/p/*': slowArticle(20) }).start();
    proxies = await Promise.all([0, 1].map(() => new TcpProxy(cluster.port).start()));
    const env = (proxy: TcpProxy) => ({
      SIFT_DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
      SIFT_TOKENS: `${TOKEN}:ops:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_RUNNER_CONCURRENCY: '8',
      SIFT_PER_HOST_CONCURRENCY: '16',
      SIFT_HEARTBEAT_S: '1',
      SIFT_INSTANCE_TTL_S: String(TTL_S),
      SIFT_DB_TIMEOUT_MS: '2000',
      SIFT_FLEET_MONITOR_MIN_INTERVAL_S: '1',
      SIFT_MONITOR_TICK_MS: '250',
    });
    procs = [];
    for (const p of proxies) procs.push(await startSiftProcess(env(p)));
  }, 120_000);

  afterAll(async () => {
    for (const p of procs) await kill(p, 'SIGKILL');
    for (const p of proxies) await p.stop();
    await db?.end().catch(() => undefined);
    await fx?.stop();
    cluster?.destroy();
  }, 60_000);

  /** A direct connection to the server (not through a proxy), made again after a restart. */
  async function direct(): Promise<Client> {
    await db?.end().catch(() => undefined);
    db = new Client({ connectionString: cluster.url() });
    db.on('error', () => undefined);
    await db.connect();
    return db;
  }

  const submit = async (p: SiftProcess, n: number, over: object = {}) => {
    const r = await fetch(`${p.url}/v1/batch`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({
        targets: Array.from({ length: n }, (_, i) => ({ url: fx.url(`/p/${n}-${Math.random()}-${i}`) })),
        options: { format: 'text' },
        ...over,
      }),
    });
    expect(r.status).toBe(202);
    return ((await r.json()) as { id: string }).id;
  };

  const requeues = async (jobId: string) =>
    (
      await db.query(
        `SELECT count(*)::int AS n FROM batch_event WHERE job_id = $1 AND type = 'batch.requeued'`,
        [jobId],
      )
    ).rows[0].n as number;

  const doneRows = async (jobId: string) =>
    (
      await db.query(
        `SELECT count(*)::int AS n FROM batch_target WHERE job_id = $1 AND status IN ('done', 'failed')`,
        [jobId],
      )
    ).rows[0].n as number;

  /** The job ended done once, with every target's result, the counts right and the events gapless. */
  async function expectWhole(jobId: string, n: number, requeued = 0): Promise<void> {
    const c = await direct();
    const job = (
      await c.query('SELECT status, targets_done, targets_failed FROM batch_job WHERE id = $1', [jobId])
    ).rows[0];
    expect(job).toEqual({ status: 'done', targets_done: n, targets_failed: 0 });
    const rows = (
      await c.query(
        `SELECT count(*) FILTER (WHERE status = 'done' AND result IS NOT NULL)::int AS done, count(*)::int AS total
           FROM batch_target WHERE job_id = $1`,
        [jobId],
      )
    ).rows[0];
    expect(rows).toEqual({ done: n, total: n });
    const events = (
      await c.query('SELECT seq, type, data FROM batch_event WHERE job_id = $1 ORDER BY seq', [jobId])
    ).rows as { seq: number; type: string; data: string }[];
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const perIdx = new Map<number, number>();
    for (const e of events.filter((x) => x.type === 'target.done')) {
      const idx = (JSON.parse(e.data) as { idx: number }).idx;
      perIdx.set(idx, (perIdx.get(idx) ?? 0) + 1);
    }
    expect(perIdx.size).toBe(n);
    expect([...perIdx.values()].every((k) => k === 1)).toBe(true);
    expect(
      events
        .filter((e) => e.type.startsWith('batch.') && e.type !== 'batch.queued' && e.type !== 'batch.running')
        .map((e) => e.type),
    ).toEqual([...Array<string>(requeued).fill('batch.requeued'), 'batch.done']);
    expect(events.some((e) => e.type === 'target.failed')).toBe(false);
  }

  /** The job's end seen from the second process; on a timeout, what the database and both processes say. */
  async function waitForEnd(id: string): Promise<void> {
    try {
      await waitForJobIn<View>(procs[1], id, H, undefined, 120_000);
    } catch (err) {
      const c = await direct();
      const state = await c.query(
        `SELECT status, holder, count(*)::int AS n FROM batch_target WHERE job_id = $1 GROUP BY 1, 2`,
        [id],
      );
      const job = await c.query('SELECT * FROM batch_job WHERE id = $1', [id]);
      const instances = await c.query('SELECT * FROM sift_instance');
      const tail = (p: SiftProcess) => p.output().split('\n').slice(-40).join('\n');
      throw new Error(
        `${(err as Error).message}\ntargets ${JSON.stringify(state.rows)}\njob ${JSON.stringify(job.rows)}\n` +
          `instances ${JSON.stringify(instances.rows)}\n--- first\n${tail(procs[0])}\n--- second\n${tail(procs[1])}`,
      );
    }
  }

  const alive = () => procs.every((p) => p.child.exitCode === null && p.child.signalCode === null);

  it('the server restarted mid-job: no process dies, the job ends once with every result', async () => {
    await direct();
    const id = await submit(procs[0], 600);
    await waitUntil(async () => ((await doneRows(id)) >= 100 ? true : undefined), '100 targets done', 60_000);
    cluster.pgCtl('restart', 'fast');
    await waitForEnd(id);
    expect(alive()).toBe(true);
    await expectWhole(id, 600);
  }, 180_000);

  it('connections cut and refused for 5 s: requests get 503 storage_unavailable in time, the job ends whole', async () => {
    await direct();
    const id = await submit(procs[0], 600);
    await waitUntil(async () => ((await doneRows(id)) >= 100 ? true : undefined), '100 targets done', 60_000);
    await Promise.all(proxies.map((p) => p.refuse()));
    try {
      const t = Date.now();
      const r = await fetch(`${procs[0].url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ targets: [{ url: fx.url('/p/during-outage') }] }),
      });
      const took = Date.now() - t;
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBeTruthy();
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('storage_unavailable');
      expect(took).toBeLessThan(6000);
      // Readiness: /healthz says so, for a load balancer to drain the instance.
      const health = await waitUntil(
        async () => {
          const h = await fetch(`${procs[1].url}/healthz`);
          return h.status === 503 ? ((await h.json()) as { ok: boolean; database: string }) : undefined;
        },
        '/healthz to answer 503',
        5000,
        100,
      );
      expect(health).toMatchObject({ ok: false, database: 'unreachable' });
      // What is asserted below is that nothing happens: no instance takes the other for lost when
      // the database is back. That only means something if the outage outlasts the TTL, so it
      // lasts until every heartbeat stored (whole seconds) is older than the TTL by a second at
      // least, read on the direct connection: every one is then past the TTL when the database
      // answers again.
      await waitUntil(
        async () => {
          const last = await db.query(`SELECT max(heartbeat_at) AS at FROM sift_instance`);
          return Number(last.rows[0].at) < Math.floor(Date.now() / 1000) - TTL_S ? true : undefined;
        },
        'every heartbeat to be older than the TTL',
        (TTL_S + 5) * 1000,
        100,
      );
    } finally {
      await Promise.all(proxies.map((p) => p.restore()));
    }
    await waitForEnd(id);
    expect(alive()).toBe(true);
    await expectWhole(id, 600);
    const recovered = await db.query(
      `SELECT count(*)::int AS n FROM batch_event WHERE type = 'batch.requeued'`,
    );
    expect(recovered.rows[0].n).toBe(0);
    await waitUntil(
      async () => ((await fetch(`${procs[0].url}/healthz`)).ok ? true : undefined),
      '/healthz 200 again',
    );
  }, 180_000);

  it('one instance stalled silently past the TTL: the other goes on within 10 s, and the job ends whole', async () => {
    await direct();
    const id = await submit(procs[0], 800, { on_restart: 'resume' });
    await waitUntil(async () => ((await doneRows(id)) >= 100 ? true : undefined), '100 targets done', 60_000);
    // Stalled while it holds targets of the job: those are what a recovery must give back.
    const b = ((await (await fetch(`${procs[1].url}/healthz`)).json()) as { instance: string }).instance;
    const heldByB = async () =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM batch_target WHERE job_id = $1 AND holder = $2 AND status = 'running'`,
          [id, b],
        )
      ).rows[0].n as number;
    await waitUntil(
      async () => {
        proxies[1].stall();
        if ((await heldByB()) > 0) return true;
        await proxies[1].restore();
        return undefined;
      },
      'the second instance holding targets of the job',
      30_000,
    );
    const base = await doneRows(id);
    try {
      // More than the other instance holds in flight and in its buffer: it must claim again.
      await waitUntil(
        async () => ((await doneRows(id)) >= base + 100 ? true : undefined),
        'the healthy instance to go on while the other is stalled',
        10_000,
        100,
      );
      // The stalled instance answers for itself: a submit gets 503 in time, never hangs.
      const t = Date.now();
      const r = await fetch(`${procs[1].url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ targets: [{ url: fx.url('/p/during-stall') }] }),
      });
      expect([r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([
        503,
        'storage_unavailable',
      ]);
      expect(Date.now() - t).toBeLessThan(6000);
      // Stalled until the healthy instance has taken it for lost and given its targets back.
      await waitUntil(
        async () => ((await requeues(id)) > 0 ? true : undefined),
        'the healthy instance to recover the stalled one',
        60_000,
        100,
      );
    } finally {
      await proxies[1].restore();
    }
    await waitForJobIn<View>(procs[0], id, H, undefined, 120_000);
    expect(alive()).toBe(true);
    await expectWhole(id, 800, 1);
  }, 180_000);

  it('a monitor ticking every 250 ms through a server restart and 3 s of refused connections: each slot runs once, runs go on', async () => {
    await direct();
    const api = async (method: string, path: string, body?: object) => {
      const r = await fetch(`${procs[0].url}${path}`, {
        method,
        headers: H,
        body: body && JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as any };
    };
    const created = await api('POST', '/v1/monitors', {
      name: 'through faults',
      urls: [fx.url('/p/watched-1'), fx.url('/p/watched-2')],
      every_s: 1,
    });
    expect(created.status).toBe(201);
    const m = created.body as { id: string; next_run_at: string };
    const origin = Date.parse(m.next_run_at);
    /** The monitor's runs as the database holds them: creation times in Unix ms. */
    const runs = async () =>
      (
        await db.query<{ created_at: string }>(
          'SELECT created_at FROM batch_job WHERE monitor_id = $1 ORDER BY created_at',
          [m.id],
        )
      ).rows.map((r) => Math.round(Number(r.created_at) * 1000));
    const more = async (than: number, why: string) =>
      waitUntil(async () => ((await runs()).length >= than ? true : undefined), why, 30_000);
    const logFrom = procs.map((p) => p.output().length);

    await more(3, 'three runs');
    // Ticks four times a second: the restart cuts some of them in the middle.
    cluster.pgCtl('restart', 'fast');
    await direct();
    const afterRestart = (await runs()).length;
    await more(afterRestart + 2, 'two runs after the restart');
    await Promise.all(proxies.map((p) => p.refuse()));
    try {
      await idle(3000, 'twelve ticks of each instance against refused connections');
    } finally {
      await Promise.all(proxies.map((p) => p.restore()));
    }
    const afterCut = (await runs()).length;
    await more(afterCut + 2, 'two runs after the connections came back');

    expect((await api('POST', `/v1/monitors/${m.id}/pause`)).status).toBe(200);
    await waitUntil(
      async () => {
        const left = await db.query(
          `SELECT count(*)::int AS n FROM batch_job WHERE monitor_id = $1 AND status IN ('queued', 'running')`,
          [m.id],
        );
        return left.rows[0].n === 0 ? true : undefined;
      },
      'the runs to end',
      30_000,
    );
    const all = await runs();
    const slots = all.map((at) => Math.floor((at - origin) / 1000));
    expect(new Set(slots).size).toBe(slots.length);
    expect((await api('GET', `/v1/monitors/${m.id}`)).body.runs).toBe(all.length);
    expect(alive()).toBe(true);
    // Each instance said that its monitors wait for the database once an outage, not once a
    // failed tick (twelve failed in the refusal alone): the restart may count twice, when a
    // connection the pool held from before it fails after a tick that went through. No tick
    // failed in any other way.
    for (const [i, p] of procs.entries()) {
      const log = p.output().slice(logFrom[i]);
      expect(log).not.toContain('monitor tick failed');
      const waits = log.split('monitors wait for the database').length - 1;
      expect(waits).toBeGreaterThanOrEqual(1);
      expect(waits).toBeLessThanOrEqual(4);
    }
  }, 180_000);
});

describe('start-up while PostgreSQL cannot be reached', () => {
  let cluster: ThrowawayCluster;
  let proxy: TcpProxy;
  beforeAll(async () => {
    ensureBuilt();
    cluster = await ThrowawayCluster.start();
    proxy = await new TcpProxy(cluster.port).start();
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
    cluster?.destroy();
  });

  it('waits for the database, logging what it tries, and starts once it answers', async () => {
    await proxy.refuse();
    const env = {
      SIFT_DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
      SIFT_TOKENS: `${TOKEN}:ops:fleet`,
    };
    const p = await spawnSiftProcess(env);
    try {
      // The database answers once sift has said it is waiting for it, not after a set time.
      await waitUntil(
        () =>
          p.output().includes(`waiting for PostgreSQL at 127.0.0.1:${proxy.port}/postgres: `)
            ? true
            : undefined,
        () => `sift to log that it waits for PostgreSQL; its output: ${p.output()}`,
        30_000,
        50,
      );
      expect(p.child.exitCode).toBeNull();
      await proxy.restore();
      await waitForHealthz(p, 30_000);
    } finally {
      await kill(p, 'SIGKILL');
    }
  }, 60_000);

  it('gives up after SIFT_DB_WAIT_S: exit 1, naming the server and the reason, never the password', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [ensureBuilt()], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(await freePort()),
        SIFT_DATABASE_URL: `postgres://sift:hunter2secret@127.0.0.1:${port}/siftdb`,
        SIFT_TOKENS: `${TOKEN}:ops:fleet`,
        SIFT_DB_WAIT_S: '2',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(out).toMatch(
      new RegExp(
        `sift: start-up failed: waiting for PostgreSQL at 127\\.0\\.0\\.1:${port}/siftdb: .*ECONNREFUSED`,
      ),
    );
    expect(out).not.toContain('hunter2secret');
  }, 60_000);
});
