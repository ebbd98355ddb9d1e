import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { sql } from 'kysely';
import { Client } from 'pg';
import request from 'supertest';
import { fingerprint } from '../../src/api/authenticator';
import { EVENT_TYPES } from '../../src/common/job-status';
import { ClientStore, Dcache, lockDeliveries, openDcache } from '../../src/dcache';
import { Fetcher } from '../../src/fetch/fetcher';
import { WebhookService } from '../../src/webhooks/webhook.service';
import {
  createTestApp,
  defaultResolver,
  tableResolver,
  tmpDbPath,
  waitForJob,
  waitUntil,
  FLEET_TOKEN,
  fleet,
  restricted,
} from '../support/app';
import { BACKENDS, createPgDatabase, type Backend } from '../support/backends';
import { Fixture, html, send } from '../support/fixture';
import { ROOT, ensureBuilt } from '../support/process';
import { Receiver, newSecret } from '../support/receiver';

/*
 * A hostile caller's jobs, one rule each:
 *   - invalid-only jobs with webhooks flood the outbox: per-caller caps, fair sender, indexed claim
 *   - one caller name with two classes: each is its own caller; the CLI loads .env as `make run`
 *   - the batch byte budget: the caller furthest over its share loses its jobs first
 *   - webhook and fetch DNS lookups share the caller's one bucket
 */

/** Rows of `caller`'s deliveries still pending, counted in the database. */
async function pendingOf(app: INestApplication, caller: string): Promise<number> {
  const r = await sql<{ n: number }>`SELECT count(*) AS n FROM batch_delivery AS d
    JOIN batch_job AS j ON j.id = d.job_id WHERE j.caller = ${caller} AND d.state = 'pending'`.execute(
    app.get(Dcache).kysely,
  );
  return Number(r.rows[0].n);
}

/** The bytes the batch budget counts: every job's results and its other rows. */
async function storedBytes(app: INestApplication): Promise<number> {
  const r = await sql<{ n: number }>`SELECT coalesce(sum(nbytes + row_bytes), 0) AS n FROM batch_job`.execute(
    app.get(Dcache).kysely,
  );
  return Number(r.rows[0].n);
}

async function healthzMs(app: INestApplication): Promise<number> {
  const t = performance.now();
  await request(app.getHttpServer()).get('/healthz').expect(200);
  return performance.now() - t;
}

/** A time every delivery is due by: the probe claim sees all of them. */
const FAR = 4_000_000_000;

/**
 * The plan of every read a delivery claim makes, on a database a running sift uses: the claim is
 * run on a connection of its own (its statements traced) and rolled back; each statement that reads
 * batch_delivery is explained. SQLite: EXPLAIN QUERY PLAN lines. PostgreSQL: the plan's nodes, with
 * sorts and sequential scans priced out, so a node that remains is one no index can replace.
 */
async function claimPlans(at: { path: string } | { url: string }): Promise<string[][]> {
  const stmts: string[] = [];
  const d = await openDcache({ ...at, trace: (s) => stmts.push(s) });
  const rolledBack = new Error('rolled back');
  try {
    stmts.length = 0;
    await d.db
      .transaction(async (tx) => {
        await lockDeliveries(tx);
        await tx.deliveries.claimDeliveries({ holder: 'plan-probe', now: FAR, limit: 16 });
        throw rolledBack;
      })
      .catch((err) => {
        if (err !== rolledBack) throw err;
      });
    const reads = stmts.filter((s) => /^\s*(select|with)\b/i.test(s) && /batch_delivery/.test(s));
    if ('path' in at) {
      return reads.map((s) =>
        d
          .sqlite!.prepare(`EXPLAIN QUERY PLAN ${s}`)
          .all()
          .map((r) => (r as { detail: string }).detail),
      );
    }
    const c = new Client({ connectionString: at.url });
    await c.connect();
    try {
      await c.query('SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off');
      const plans: string[][] = [];
      for (const s of reads) {
        await c.query(`PREPARE probe AS ${s}`);
        const types = (
          await c.query<{ t: string[] }>(
            `SELECT parameter_types::text[] AS t FROM pg_prepared_statements WHERE name = 'probe'`,
          )
        ).rows[0].t;
        const args = types.map((t) =>
          t === 'bigint' || t === 'double precision'
            ? String(FAR)
            : /int|numeric/.test(t)
              ? '1000'
              : `'restricted:restricted-caller'`,
        );
        const plan = (
          await c.query(`EXPLAIN (FORMAT JSON) EXECUTE probe${args.length ? `(${args.join(', ')})` : ''}`)
        ).rows[0]['QUERY PLAN'][0].Plan;
        await c.query('DEALLOCATE probe');
        const nodes: string[] = [];
        const walk = (n: any) => {
          nodes.push(`${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Index Name'] ?? ''}`.trim());
          for (const p of n.Plans ?? []) walk(p);
        };
        walk(plan);
        plans.push(nodes);
      }
      return plans;
    } finally {
      await c.end();
    }
  } finally {
    await d.close();
  }
}

/** No plan sorts, and every read of batch_delivery goes through an index. */
function expectIndexedClaim(backend: Backend, plans: string[][]): void {
  expect(plans.length).toBeGreaterThan(0);
  for (const lines of plans) {
    for (const line of lines) {
      if (backend === 'sqlite') {
        expect(line).not.toMatch(/TEMP B-TREE/);
        if (
          /^(SCAN|SEARCH) (batch_delivery|[a-z])\b(?! USING)/.test(line) &&
          !/^SCAN due_callers/.test(line)
        ) {
          throw new Error(`a read of batch_delivery without an index: ${line}`);
        }
      } else {
        expect(line).not.toMatch(/Sort/);
        if (/batch_delivery/.test(line)) expect(line).toMatch(/^Index (Only )?Scan/);
      }
    }
  }
}

describe.each(BACKENDS)(
  'an outbox flood from a restricted caller is capped and delays no one, on %s',
  (backend) => {
    let app: INestApplication;
    let at: { path: string } | { url: string };
    let drop = async () => {};
    let rx: Receiver;
    const secret = newSecret();
    /** The flooder's receiver: its name takes 5 s to fail to resolve, at every attempt. */
    const slowResolver = (host: string) =>
      host === 'hook.flood.test'
        ? new Promise<never>((_, reject) =>
            setTimeout(
              () => reject(Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' })),
              5000,
            ),
          )
        : defaultResolver(host);

    beforeAll(async () => {
      rx = await new Receiver(secret).start();
      let env: Record<string, string>;
      if (backend === 'sqlite') {
        const file = tmpDbPath();
        at = { path: file };
        env = { SIFT_DB: file };
      } else {
        const pg = await createPgDatabase();
        at = { url: pg.url };
        drop = pg.drop;
        env = { SIFT_DATABASE_URL: pg.url };
      }
      ({ app } = await createTestApp(
        {
          ...env,
          SIFT_FLEET_ALLOW: '127.0.0.0/8',
          SIFT_WEBHOOK_RETRY_S: '1',
          SIFT_DNS_TIMEOUT_MS: '6000',
          SIFT_BATCH_MAX_BYTES: String(8_000_000),
        },
        { resolver: slowResolver },
      ));
    });

    afterAll(async () => {
      await app?.close();
      await rx.stop();
      await drop();
    });

    it('caps the caller’s pending deliveries and stored bytes; a fleet webhook and /healthz stay prompt; the claim reads an index', async () => {
      const http = () => request(app.getHttpServer());
      const invalid = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => ({ url: `not a url ${tag} ${i}` }));
      const hook = { url: 'http://hook.flood.test/h', secret, events: [...EVENT_TYPES] };
      const slowest: number[] = [];
      const submit = async (body: object) => {
        const r = await http().post('/v1/batch').set(restricted).send(body);
        slowest.push(await healthzMs(app));
        return r;
      };

      // Twenty small jobs: twenty deliveries due at once, each attempt held 5 s by its name.
      for (let j = 0; j < 20; j++) {
        const r = await submit({ targets: invalid(1, `s${j}`), ignore_invalid_urls: true, webhook: hook });
        expect(r.status).toBe(202);
      }
      // A fleet caller's webhook is sent at once all the same.
      const t0 = performance.now();
      const own = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({ targets: invalid(1, 'fleet'), ignore_invalid_urls: true, webhook: { url: rx.url, secret } });
      expect(own.status).toBe(202);
      await waitUntil(
        () => rx.unique().find((r) => r.payload.job_id === own.body.id),
        'the fleet webhook',
        20_000,
      );
      expect(performance.now() - t0).toBeLessThan(3000);

      // Big ones, until the caller's pending deliveries reach the cap: later ones are 429.
      const statuses: number[] = [];
      for (let j = 0; j < 7; j++) {
        const r = await submit({ targets: invalid(1000, `b${j}`), ignore_invalid_urls: true, webhook: hook });
        statuses.push(r.status);
        if (r.status === 429) expect(r.body.error.code).toBe('too_many_requests');
      }
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
      // The cap (5,000), and at most one job's deliveries (1,002) over it.
      expect(await pendingOf(app, 'restricted-caller')).toBeLessThanOrEqual(5000 + 1002);

      // Jobs of invalid URLs only, without a webhook, weigh what they store: the budget holds.
      for (let j = 0; j < 10; j++) {
        expect((await submit({ targets: invalid(1000, `n${j}`), ignore_invalid_urls: true })).status).toBe(
          202,
        );
      }
      expect(await storedBytes(app)).toBeLessThanOrEqual(8_000_000);
      const stored = await sql<{ n: number }>`SELECT count(*) AS n FROM batch_target AS t
      JOIN batch_job AS j ON j.id = t.job_id WHERE j.caller = 'restricted-caller'`.execute(
        app.get(Dcache).kysely,
      );
      // Of the targets accepted, the budget keeps some 8 MB.
      const accepted = 20 + 1000 * statuses.filter((s) => s === 202).length + 10_000;
      expect(Number(stored.rows[0].n)).toBeLessThan(accepted);
      // The fleet caller, under its share, lost nothing.
      expect((await http().get(`/v1/batch/${own.body.id}`).set(fleet)).status).toBe(200);
      expect(Math.max(...slowest)).toBeLessThan(1000);
      // The sender stopped (as at shutdown) frees what it held: the probe claim finds deliveries due.
      await app.get(WebhookService).stop();
      expectIndexedClaim(backend, await claimPlans(at));
    }, 180_000);
  },
);

describe('a caller is its name and its class', () => {
  let app: INestApplication;
  let fx: Fixture;
  const held: (() => void)[] = [];
  const FLEET_A = 'fleet-a-token-0123456789';
  const RESTRICTED_A = 'sift_restricted-a-token-0123456789';

  beforeAll(async () => {
    // Answers only once the test is over: the jobs fetching it stay live.
    fx = await new Fixture({
      '/hang/*': (req, res) => held.push(() => send(200, 'text/plain', 'late')(req, res)),
    }).start();
    ({ app } = await createTestApp({
      SIFT_TOKENS: `${FLEET_A}:fleetA:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_FLEET_MAX_LIVE_JOBS: '4',
    }));
    // A restricted token of the same name, as `token create` made it where SIFT_TOKENS was unseen.
    await app.get(ClientStore).addClient({
      fingerprint: fingerprint(RESTRICTED_A),
      caller: 'fleetA',
      callerClass: 'restricted',
      createdAt: Math.floor(Date.now() / 1000),
    });
  });

  afterAll(async () => {
    for (const answer of held) answer();
    await app?.close();
    await fx.stop();
  });

  it('the restricted fleetA neither lists nor replays the fleet fleetA’s jobs, nor shares its live-job count', async () => {
    const http = () => request(app.getHttpServer());
    const asFleet = { Authorization: `Bearer ${FLEET_A}` };
    const asRestricted = { Authorization: `Bearer ${RESTRICTED_A}` };
    // Four live jobs of the fleet fleetA (their fetches wait), the first under an Idempotency-Key.
    const body = { targets: [{ url: fx.url('/hang/0') }] };
    const first = await http().post('/v1/batch').set(asFleet).set('Idempotency-Key', 'k-1').send(body);
    expect(first.status).toBe(202);
    for (let i = 1; i < 4; i++) {
      const r = await http()
        .post('/v1/batch')
        .set(asFleet)
        .send({ targets: [{ url: fx.url(`/hang/${i}`) }] });
      expect(r.status).toBe(202);
    }

    const listed = await http().get('/v1/batch').set(asRestricted);
    expect(listed.status).toBe(200);
    expect(listed.body.jobs).toEqual([]);
    // Those four are not the restricted fleetA's live jobs (its limit is 4 too).
    const own = await http()
      .post('/v1/batch')
      .set(asRestricted)
      .send({ targets: [{ url: 'not a url' }], ignore_invalid_urls: true });
    expect(own.status).toBe(202);
    // Nor is the fleet fleetA's key its key.
    const again = await http().post('/v1/batch').set(asRestricted).set('Idempotency-Key', 'k-1').send(body);
    expect(again.status).toBe(202);
    expect(again.body.id).not.toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect((await http().get(`/v1/batch/${first.body.id}`).set(asRestricted)).status).toBe(404);
    expect(
      (await http().get('/v1/batch').set(asFleet)).body.jobs.map((j: { id: string }) => j.id),
    ).not.toContain(again.body.id);
  }, 60_000);
});

describe('every CLI command loads the environment as `make run` does', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  /** `node dist/src/cli.js ARGS` in `cwd`, with only PATH and `env` set. */
  const cli = (args: string[], cwd: string, env: Record<string, string> = {}) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      execFile(
        process.execPath,
        [path.join(ROOT, 'dist', 'src', 'cli.js'), ...args],
        { cwd, env: { PATH: process.env.PATH ?? '', ...env } },
        (error, out, err) =>
          resolve({
            code: error ? ((error as { code?: number }).code ?? 1) : 0,
            out: String(out),
            err: String(err),
          }),
      );
    });

  it('token create reads .env in the working directory: its SIFT_DB, and its SIFT_TOKENS for the clash check', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-env-'));
    fs.writeFileSync(
      path.join(dir, '.env'),
      `# as make run reads it\nSIFT_DB=${path.join(dir, 'from-env-file.db')}\nSIFT_TOKENS=fleet-a-token-0123456789:fleetA:fleet\n`,
    );
    const clash = await cli(['token', 'create', 'fleetA', '--class', 'restricted'], dir);
    expect(clash.code).not.toBe(0);
    expect(clash.err).toContain('caller "fleetA" is both fleet and restricted');
    const ok = await cli(['token', 'create', 'other', '--class', 'restricted'], dir);
    expect(ok.code).toBe(0);
    expect(fs.existsSync(path.join(dir, 'from-env-file.db'))).toBe(true);
    // A variable set in the process environment wins over the file.
    const own = path.join(dir, 'from-process.db');
    expect((await cli(['migrate'], dir, { SIFT_DB: own })).code).toBe(0);
    expect(fs.existsSync(own)).toBe(true);
  }, 60_000);
});

describe('the batch byte budget is shared by callers', () => {
  let app: INestApplication;
  let fx: Fixture;
  const B = 'fleet-b-token-0123456789';
  const page = html(
    `<article><h1>Page</h1><p>${'words enough to be kept as text. '.repeat(600)}</p></article>`,
  );

  beforeAll(async () => {
    fx = await new Fixture({ '/p/*': send(200, 'text/html', page) }).start();
    ({ app } = await createTestApp({
      SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet,${B}:fleet-b:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_BATCH_MAX_BYTES: '150000',
    }));
  });

  afterAll(async () => {
    await app?.close();
    await fx.stop();
  });

  it('a caller filling the budget loses its own oldest jobs, not another caller’s older 30-day job', async () => {
    const http = () => request(app.getHttpServer());
    const asB = { Authorization: `Bearer ${B}` };
    const kept = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/p/a') }], ttl_s: 30 * 86400 });
    expect((await waitForJob(app, kept.body.id)).status).toBe('done');
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await http()
        .post('/v1/batch')
        .set(asB)
        .send({ targets: [{ url: fx.url(`/p/b${i}`) }] });
      ids.push(r.body.id);
      await waitUntil(async () => {
        const v = await http().get(`/v1/batch/${r.body.id}`).set(asB);
        return v.status === 404 || v.body.status === 'done' || undefined;
      }, `job ${i} of fleet-b`);
    }
    expect((await http().get(`/v1/batch/${kept.body.id}`).set(fleet)).status).toBe(200);
    expect((await http().get(`/v1/batch/${ids[0]}`).set(asB)).status).toBe(404);
    expect((await http().get(`/v1/batch/${ids[7]}`).set(asB)).status).toBe(200);
    expect(await storedBytes(app)).toBeLessThanOrEqual(150_000);
  }, 120_000);
});

describe('webhook and fetch DNS lookups share the caller’s bucket', () => {
  let app: INestApplication;
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const resolver = (host: string) =>
    host === 'slow.test'
      ? gate.then(() => {
          throw Object.assign(new Error('getaddrinfo ENOTFOUND slow.test'), { code: 'ENOTFOUND' });
        })
      : tableResolver({})(host);

  beforeAll(async () => {
    ({ app } = await createTestApp({ SIFT_DNS_TIMEOUT_MS: '20000' }, { resolver }));
  });

  afterAll(async () => {
    release();
    await app?.close();
  });

  it('a fetch and a webhook of one caller, both waiting on DNS, are two lookups in one bucket', async () => {
    const http = () => request(app.getHttpServer());
    const dns = app.get(Fetcher).dns;
    const fetching = http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: 'http://slow.test/page', robots: false });
    const done = fetching.then((r) => r);
    await waitUntil(() => dns.inFlight('fleet:fleet-caller') === 1 || undefined, 'the fetch lookup');
    const r = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [{ url: 'not a url' }],
        ignore_invalid_urls: true,
        webhook: { url: 'http://slow.test/hook', secret: newSecret() },
      });
    expect(r.status).toBe(202);
    await waitUntil(
      () => (dns.inFlight('fleet:fleet-caller') === 2 ? true : undefined),
      () =>
        `both lookups under fleet:fleet-caller; seen ${dns.inFlight('fleet:fleet-caller')} there and ${dns.inFlight('fleet-caller')} under fleet-caller`,
      5000,
    );
    expect(dns.inFlight('fleet-caller')).toBe(0);
    release();
    expect((await done).status).toBe(502);
  }, 30_000);
});
