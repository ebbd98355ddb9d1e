import * as nodeHttp from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { MetricsAggregates } from '../../src/api/metrics-aggregates';
import { Dcache } from '../../src/dcache';
import { createTestApp, waitForJob, waitUntil, TestClock, fleet, restricted } from '../support/app';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { Fixture, send } from '../support/fixture';

function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

describe('GET /metrics', () => {
  let app: INestApplication;
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({ '/plain': send(200, 'text/plain', 'hello') }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });

  it('counts fetches by outcome, cache hits and misses, jobs and targets', async () => {
    const http = () => request(app.getHttpServer());
    await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/plain') });
    await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/plain') });
    await http().post('/v1/fetch').set(fleet).send({ url: 'http://10.0.0.1/' });
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({ targets: [{ url: fx.url('/plain') }, { url: 'http://10.0.0.2/' }] });
    expect(await waitForJob(app, sub.body.id)).toMatchObject({ status: 'partial' });
    const r = await http().get('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/plain/);
    const t = r.text;
    expect(value(t, 'sift_fetches_total{outcome="ok",verdict="ok"}')).toBe(3);
    expect(value(t, 'sift_fetches_total{outcome="blocked_address",verdict="none"}')).toBe(2);
    expect(value(t, 'sift_cache{stat="hits"}')).toBe(2);
    expect(value(t, 'sift_cache{stat="misses"}')).toBe(3); // the first fetch and both blocked ones
    expect(value(t, 'sift_batch_jobs{status="partial"}')).toBe(1);
    expect(value(t, 'sift_batch_targets_total{status="done"}')).toBe(1);
    expect(value(t, 'sift_batch_targets_total{status="failed"}')).toBe(1);
    expect(value(t, 'sift_runner_in_flight')).toBe(0);
    expect(value(t, 'sift_runner_queue_depth')).toBe(0);
    expect(value(t, 'sift_fetch_duration_seconds_count{cached="true"}')).toBe(2);
    expect(t).toMatch(/^sift_store_misses\{accessor="batchJob"\} \d+$/m);
    expect(t).toMatch(/^sift_process_resident_memory_bytes \d+/m);
  });
});

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** An address of this machine beyond loopback: a scrape from it is one from the network. */
function outsideAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('this test needs an IPv4 address of this machine beyond loopback');
}

/** A connection made ahead of its one request; `answer` is the whole response, when it ended. */
function connect(server: net.Server): Promise<{
  send: (path: string, headers?: Record<string, string>) => Promise<void>;
  answer: Promise<{ status: number; body: string; at: number }>;
}> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    const answer = new Promise<{ status: number; body: string; at: number }>((done, fail) => {
      socket.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const split = text.indexOf('\r\n\r\n');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
        done({ status, body: text.slice(split + 4), at: Date.now() });
      });
      socket.once('error', fail);
    });
    const send = (path: string, headers: Record<string, string> = {}) =>
      new Promise<void>((written) => {
        const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${lines.join('')}\r\n`,
          () => written(),
        );
      });
    socket.once('connect', () => resolve({ send, answer }));
    socket.once('error', reject);
  });
}

/**
 * `n` ended jobs and a webhook delivery of each (half delivered, half failed), written directly,
 * 10,000 rows a statement: one statement of 100,000 rows (each through the jobs' triggers) can
 * outlast the server's statement timeout on a loaded machine.
 */
async function seed(db: Kysely<any>, from: number, n: number, now: number): Promise<void> {
  for (let start = from; start < from + n; start += 10_000) {
    const end = Math.min(from + n, start + 10_000) - 1;
    const rows = sql`WITH RECURSIVE k(i) AS (
        SELECT ${sql.lit(start)} UNION ALL SELECT i + 1 FROM k WHERE i < ${sql.lit(end)})`;
    await sql`INSERT INTO batch_job (id, caller, caller_class, idem_key, status, targets_total, created_at, lease)
      ${rows} SELECT 'load-' || i, 'load', 'fleet', 'load-' || i, 'done', 1, ${sql.lit(now)}, ${sql.lit(now)} FROM k`.execute(
      db,
    );
    await sql`INSERT INTO batch_delivery (job_id, seq, type, payload, state, created_at, next_attempt_at)
      ${rows} SELECT 'load-' || i, 1, 'batch.done', '{}', CASE WHEN i % 2 = 0 THEN 'delivered' ELSE 'failed' END,
        ${sql.lit(now)}, ${sql.lit(now)} FROM k`.execute(db);
  }
}

/** /metrics under a caller that scrapes hard, and from beyond loopback. */
describe.each(BACKENDS)('GET /metrics under a hostile scraper on %s', (backend) => {
  let app: INestApplication;
  let pg: { url: string; drop: () => Promise<void> } | undefined;
  const clock = new TestClock();
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    pg = backend === 'postgres' ? await createPgDatabase() : undefined;
    ({ app } = await createTestApp(
      { SIFT_METRICS_TOKEN: METRICS_TOKEN, ...(pg ? { SIFT_DATABASE_URL: pg.url } : {}) },
      { clock },
    ));
    await app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await app.close();
    await pg?.drop();
  });

  it('20 scrapes over 100,000 jobs and deliveries: one reading in 15 s; an authenticated call behind them answers within 3 s', async () => {
    const N = 100_000;
    await seed(app.get(Dcache).kysely, 0, N, clock.now());
    const delivered = (t: string) => value(t, 'sift_webhook_deliveries{state="delivered"}');
    expect(delivered((await http().get('/metrics')).text)).toBe(N / 2);
    // 20 scrapes in flight, then an authenticated call behind them: each on a connection made
    // (and accepted) before, so that the server receives them in that order.
    const server = app.getHttpServer() as net.Server;
    let accepted = 0;
    const onConnection = () => accepted++;
    server.on('connection', onConnection);
    const conns = await Promise.all(Array.from({ length: 21 }, () => connect(server)));
    await waitUntil(() => (accepted >= 21 ? true : undefined), 'the server to accept 21 connections');
    server.off('connection', onConnection);
    const [caller, ...scrapers] = conns;
    for (const c of scrapers) await c.send('/metrics');
    const started = Date.now();
    await caller.send('/v1/batch', fleet);
    const authed = await caller.answer;
    const scrapes = await Promise.all(scrapers.map((c) => c.answer));
    expect(authed.status).toBe(200);
    expect(authed.at - started).toBeLessThan(3000);
    expect(scrapes.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(scrapes.map((r) => delivered(r.body))).toEqual(Array(20).fill(N / 2));
    expect(scrapes.map((r) => value(r.body, 'sift_batch_jobs{status="done"}'))).toEqual(Array(20).fill(N));

    // Within 15 s of that reading no scrape reads the database again: the figures stand still.
    await seed(app.get(Dcache).kysely, N, 1000, clock.now());
    clock.t += 14_000;
    const still = await Promise.all(Array.from({ length: 20 }, () => http().get('/metrics')));
    expect(still.map((r) => delivered(r.text))).toEqual(Array(20).fill(N / 2));
    expect(app.get(MetricsAggregates).readings).toBe(1);

    // Past the window, one scrape starts a new reading; the next ones see it.
    clock.t += 1000;
    await waitUntil(
      async () => (delivered((await http().get('/metrics')).text) === N / 2 + 500 ? true : undefined),
      'the figures to be read again after 15 s',
    );
    expect(app.get(MetricsAggregates).readings).toBe(2);
  });

  it('beyond loopback a scrape needs SIFT_METRICS_TOKEN or a fleet token; 127.0.0.0/8 needs none', async () => {
    const host = outsideAddress();
    // The same app, also on an address of this machine that is not loopback.
    const outside = nodeHttp.createServer(app.getHttpAdapter().getInstance());
    await new Promise<void>((resolve) => outside.listen(0, host, resolve));
    try {
      const url = `http://${host}:${(outside.address() as AddressInfo).port}/metrics`;
      const scrape = (headers: Record<string, string> = {}) => fetch(url, { headers });
      const none = await scrape();
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      expect(((await none.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      expect((await scrape({ Authorization: 'Bearer not-a-known-token' })).status).toBe(401);
      const withToken = await scrape({ Authorization: `Bearer ${METRICS_TOKEN}` });
      expect(withToken.status).toBe(200);
      expect(await withToken.text()).toMatch(/^sift_batch_jobs\{status="done"\} \d+$/m);
      expect((await scrape(fleet)).status).toBe(200);
      const byRestricted = await scrape(restricted);
      expect(byRestricted.status).toBe(403);
      expect(((await byRestricted.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    } finally {
      await new Promise((resolve) => outside.close(resolve));
    }
    // Every 127.x address is this machine: a scrape from 127.0.0.2 needs no token.
    const port = (app.getHttpServer().address() as AddressInfo).port;
    const status = await new Promise<number>((resolve, reject) =>
      nodeHttp
        .get({ host: '127.0.0.1', port, path: '/metrics', localAddress: '127.0.0.2' }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject),
    );
    expect(status).toBe(200);
  });
});
