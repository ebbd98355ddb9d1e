import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Fixture, html, send } from '../support/fixture';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import {
  ensureBuilt,
  kill,
  NODE_FLAGS,
  ROOT,
  sift,
  startSiftProcess,
  waitForJobIn,
} from '../support/process';
import { waitUntil } from '../support/wait';

const TOKEN = 'process-test-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

describe('sift as a process', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await new Fixture({
      '/slow/*': (req, res) =>
        setTimeout(() => send(200, 'text/html', html('<p>slow page body</p>'))(req, res), 300),
    }).start();
  });
  afterAll(() => fx.stop());

  const env = (db: string, extra: Record<string, string> = {}) => ({
    SIFT_DB: db,
    SIFT_TOKENS: `${TOKEN}:proc:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    ...extra,
  });
  const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-proc-')), 'sift.db');

  it.each([
    ['a foreign file', () => Buffer.from('these are my notes, not a database\n'.repeat(300))],
    [
      'a corrupt database',
      () => {
        const b = Buffer.alloc(8192, 0x5a);
        Buffer.from('SQLite format 3\0').copy(b); // a database header over garbage
        return b;
      },
    ],
  ])('refuses to start on %s, naming the file, without overwriting it', async (_name, content) => {
    const db = tmpDb();
    const bytes = content();
    fs.writeFileSync(db, bytes);
    await expect(startSiftProcess(env(db))).rejects.toThrow(db);
    expect(fs.readFileSync(db)).toEqual(bytes);
  });

  it('eight `sift migrate` at once on one new database file all succeed, three times over', async () => {
    // Before: with deferred transactions, two of them upgrading a read lock at once failed with
    // "database is locked" (in 3 of 5 such rounds on the development machine).
    ensureBuilt();
    for (let round = 0; round < 3; round++) {
      const db = tmpDb();
      const runs = await Promise.all(
        Array.from({ length: 8 }, () => sift(['migrate'], { SIFT_DB: db, SIFT_TOKENS: '' })),
      );
      expect(runs.map((r) => (r.code === 0 ? 'ok' : r.err.trim()))).toEqual(Array(8).fill('ok'));
    }
    // 24 processes of about a second of CPU each, on two cores.
  }, 90_000);

  it('eight threads opening the same 300 new files at once: every open succeeds', async () => {
    // Before: turning a new file to WAL did not wait on busy_timeout, and one open in about a
    // thousand failed with "database is locked" (every run of this test failed, 1 to 5 times).
    const connections = path.join(path.dirname(ensureBuilt()), 'dcache', 'connections.js');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-opens-'));
    const code = `
      const { openSqlite } = require(${JSON.stringify(connections)});
      const { parentPort, workerData } = require('node:worker_threads');
      const failures = [];
      for (let i = 0; i < 300; i++) {
        try { openSqlite(workerData + '/f' + i + '.db').sqlite.close(); }
        catch (err) { failures.push(err.message); }
      }
      parentPort.postMessage(failures);`;
    try {
      const failures = await Promise.all(
        Array.from(
          { length: 8 },
          () =>
            new Promise<string[]>((resolve, reject) => {
              const w = new Worker(code, { eval: true, workerData: dir });
              w.once('message', resolve);
              w.once('error', reject);
            }),
        ),
      );
      expect(failures.flat()).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('three processes started at once on one new database file: one comes up, two are refused', async () => {
    // Before: one died with "migration 0001-batch-store failed: database is locked". One server
    // per SQLite file now: the two others stop before they open the database, naming the holder.
    const db = tmpDb();
    const started = await Promise.allSettled([0, 1, 2].map(() => startSiftProcess(env(db))));
    const up = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    for (const p of up) await kill(p, 'SIGTERM');
    const refused = `sift: start-up refused: ${db} is in use by another sift (pid ${up[0]?.child.pid}`;
    expect(
      started
        .map((r) =>
          r.status === 'fulfilled' ? 'up' : String(r.reason).includes(refused) || String(r.reason),
        )
        .sort(),
    ).toEqual([true, true, 'up']);
  });

  it('logs one JSON line per request with its request id', async () => {
    const p = await startSiftProcess(env(tmpDb()));
    const r = await fetch(`${p.url}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
    expect(r.headers.get('x-request-id')).toBe('trace-123');
    const r2 = await fetch(`${p.url}/healthz`);
    expect(r2.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await waitUntil(() => (p.output().includes('trace-123') ? true : undefined), 'the request log line');
    await kill(p, 'SIGTERM');
    const lines = p
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const line = lines.find((l) => l.message?.request_id === 'trace-123');
    expect(line).toMatchObject({
      level: 'log',
      context: 'http',
      message: { method: 'GET', path: '/healthz', status: 200 },
    });
  });

  it('the tests, `make run` and `npm start` launch Node with the same flags', () => {
    const makefile = fs.readFileSync(path.join(ROOT, 'Makefile'), 'utf8');
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(/^NODE_FLAGS := (.*)$/m.exec(makefile)?.[1].split(' ')).toEqual(NODE_FLAGS);
    expect(pkg.scripts.start).toBe(`node ${NODE_FLAGS.join(' ')} dist/src/main.js`);
  });

  it('builds no Intl.DateTimeFormat while it starts, fetches and extracts (each maps ICU locale data)', async () => {
    // Before: three at start-up, two from @nestjs/common's logger as it loads and one from the
    // sweeper's cron job: about 8 MB of resident memory that JSON logs never use.
    const watch = path.join(ROOT, 'test', 'fixtures', 'intl-watch.js');
    const p = await startSiftProcess(env(tmpDb()), [...NODE_FLAGS, '-r', watch]);
    const r = await fetch(`${p.url}/v1/fetch`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({ url: fx.url('/slow/1') }),
    });
    expect(r.status).toBe(200);
    expect((await r.json()).content).toContain('slow page body');
    await kill(p, 'SIGTERM');
    expect(p.output()).toContain('"listening on');
    // Nest's line per module and per route is debug, not what a start at the default level says.
    expect(p.output()).not.toMatch(/Mapped \{|dependencies initialized/);
    expect(
      p
        .output()
        .split('\n')
        .filter((l) => l.startsWith('intl-watch')),
    ).toEqual([]);
  });

  it('loads of undici only its agent and request API, not its fetch, WebSocket, caches or mocks', async () => {
    // Before: undici's index, about 3 MB more heap in every sift process.
    ensureBuilt();
    const script = `require(${JSON.stringify(path.join(ROOT, 'dist', 'src', 'fetch', 'fetcher.js'))});
      const undici = Object.keys(require.cache).filter((f) => f.includes('/node_modules/undici/'));
      console.log(JSON.stringify(undici.map((f) => f.split('/node_modules/undici/')[1])));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT });
    const loaded: string[] = JSON.parse(stdout);
    expect(loaded).toContain('lib/dispatcher/agent.js');
    expect(loaded).toContain('lib/api/api-request.js');
    expect(loaded.filter((f) => /^(index\.js|lib\/(web|mock|cache)\/)/.test(f))).toEqual([]);
  });

  it("Nest's text logger, loaded after lazy-intl, still stamps its lines with the local date and time", async () => {
    ensureBuilt();
    const script = `require(${JSON.stringify(path.join(ROOT, 'dist', 'src', 'tuning', 'lazy-intl.js'))});
      new (require('@nestjs/common').ConsoleLogger)('probe', { colors: false }).log('hello');`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: ROOT });
    expect(stdout).toMatch(
      /^\[Nest\] \d+ +- \d{2}\/\d{2}\/\d{4}, \d{1,2}:\d{2}:\d{2} [AP]M +LOG \[probe\] hello/,
    );
  });

  it('SIGTERM: stops taking work, returns targets in flight to pending, closes the database', async () => {
    const db = tmpDb();
    const p = await startSiftProcess(
      env(db, { SIFT_SHUTDOWN_GRACE_MS: '50', SIFT_RUNNER_CONCURRENCY: '4', SIFT_PER_HOST_CONCURRENCY: '4' }),
    );
    const targets = Array.from({ length: 40 }, (_, i) => ({ url: fx.url(`/slow/${i}`) }));
    const sub = await (
      await fetch(`${p.url}/v1/batch`, {
        method: 'POST',
        headers: H,
        body: JSON.stringify({ targets, on_restart: 'resume' }),
      })
    ).json();
    const slowHits = () => [...fx.hits.keys()].filter((k) => k.startsWith('/slow/')).length;
    await waitUntil(() => (slowHits() >= 4 ? true : undefined), '4 targets in flight');
    const code = await kill(p, 'SIGTERM');
    expect(code === 0 || code === null).toBe(true);
    const d = new Database(db, { readonly: true });
    const counts = d
      .prepare('SELECT status, count(*) AS n FROM batch_target WHERE job_id = ? GROUP BY status')
      .all(sub.id) as { status: string; n: number }[];
    const job = d.prepare('SELECT status FROM batch_job WHERE id = ?').get(sub.id) as { status: string };
    d.close();
    expect(counts.find((c) => c.status === 'running')).toBeUndefined();
    expect(job.status).toBe('running');
    // Started again, the job resumes and finishes.
    const p2 = await startSiftProcess(
      env(db, { SIFT_RUNNER_CONCURRENCY: '16', SIFT_PER_HOST_CONCURRENCY: '16' }),
    );
    const view = await waitForJobIn(p2, sub.id, H);
    expect(view).toMatchObject({ status: 'done', targets_done: 40 });
    await kill(p2, 'SIGTERM');
  });
});
