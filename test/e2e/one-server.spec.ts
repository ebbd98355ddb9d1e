import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Fixture, slowArticle } from '../support/fixture';
import {
  ensureBuilt,
  freePort,
  kill,
  ROOT,
  sift,
  startSiftProcess,
  waitForJobIn,
  type SiftProcess,
} from '../support/process';

const TOKEN = 'one-server-test-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const N = 40;

/**
 * One sift server per SQLite file: a second `sift serve` on the file of a live one stops before it
 * changes anything, naming the file and the holder; the lock dies with the process that held it;
 * the CLI's own commands are not servers and work beside one.
 */
describe('one server per SQLite file', () => {
  let fx: Fixture;
  let procs: SiftProcess[] = [];
  const env = (db: string) => ({
    SIFT_DB: db,
    SIFT_TOKENS: `${TOKEN}:one:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
    SIFT_RUNNER_CONCURRENCY: '2',
    SIFT_PER_HOST_CONCURRENCY: '2',
  });
  const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-one-')), 'sift.db');
  const start = async (db: string) => {
    const p = await startSiftProcess(env(db));
    procs.push(p);
    return p;
  };
  const portOf = (p: SiftProcess) => new URL(p.url).port;

  /**
   * `sift serve` on db and another port: its exit code and output, or code null when it is still
   * running after a while (it came up beside the first one), and then it is killed.
   */
  async function secondServe(db: string): Promise<{ code: number | null; out: string; err: string }> {
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'src', 'cli.js'), 'serve'], {
      env: { PATH: process.env.PATH ?? '', ...env(db), PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(timer);
    return { code, out, err };
  }

  const refusal = (db: string, p: SiftProcess) =>
    `sift: start-up refused: ${db} is in use by another sift (pid ${p.child.pid}, port ${portOf(p)}); ` +
    'stop it first or set SIFT_DB to another file';

  beforeAll(async () => {
    ensureBuilt();
    fx = await new Fixture({ '/s/*': slowArticle(400) }).start();
  });
  afterEach(async () => {
    for (const p of procs) await kill(p, 'SIGKILL');
    procs = [];
  });
  afterAll(() => fx.stop());

  it('a second server on the file of a live one exits 1 at once, naming the file and the holder; the first one’s job ends done', async () => {
    const db = tmpDb();
    const first = await start(db);
    const targets = Array.from({ length: N }, (_, i) => ({ url: fx.url(`/s/${i}`) }));
    const sub = await fetch(`${first.url}/v1/batch`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({ targets, on_restart: 'fail', options: { format: 'text' } }),
    });
    expect(sub.status).toBe(202);
    const id = ((await sub.json()) as { id: string }).id;
    await waitForJobIn<{ status: string; targets_done: number }>(
      first,
      id,
      H,
      (j) => j.status === 'running' && j.targets_done >= 1,
    );

    const second = await secondServe(db);
    expect(second.code).toBe(1);
    expect(second.err.trim()).toBe(refusal(db, first));
    expect(second.out).toBe('');

    // The first one's job was not failed by a restart that was not one: it runs to its end.
    const mid = await waitForJobIn<{ status: string; targets_done: number }>(first, id, H, () => true);
    expect(mid.status).toBe('running');
    expect(mid.targets_done).toBeLessThan(N);
    const end = await waitForJobIn<{
      status: string;
      error?: string | null;
      targets_done: number;
      targets_failed: number;
    }>(first, id, H);
    expect(end).toMatchObject({ status: 'done', targets_done: N, targets_failed: 0 });
    expect(end.error).toBeFalsy();
  }, 60_000);

  it('a SIGKILLed server leaves no lock behind: the next one on the file starts at once', async () => {
    const db = tmpDb();
    const first = await start(db);
    expect((await secondServe(db)).err.trim()).toBe(refusal(db, first));
    await kill(first, 'SIGKILL');

    const t0 = Date.now();
    const next = await start(db);
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(JSON.parse(fs.readFileSync(`${db}.holder`, 'utf8'))).toEqual({
      pid: next.child.pid,
      port: Number(portOf(next)),
    });
    for (const f of [db, `${db}.lock`, `${db}.holder`]) expect(fs.statSync(f).mode & 0o777).toBe(0o600);
    // And it holds the file in turn.
    expect((await secondServe(db)).err.trim()).toBe(refusal(db, next));
  }, 60_000);

  it('a start refused before the holder has written its record waits for it, past a dead one’s', async () => {
    // Before: the holder's record is written just after its lock, and a start refused in between
    // said "holder unknown" (or named the dead server whose record was still there).
    const db = tmpDb();
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.once('exit', r));
    fs.writeFileSync(`${db}.holder`, `${JSON.stringify({ pid: dead.pid, port: 1 })}\n`);
    // A holder that takes the lock, says so, and writes its record half a second later.
    const script = `
      const fs = require('node:fs');
      const db = new (require('better-sqlite3'))(process.argv[1] + '.lock');
      db.pragma('journal_mode = MEMORY');
      db.exec('BEGIN EXCLUSIVE');
      process.stdout.write('locked\\n');
      setTimeout(() => fs.writeFileSync(process.argv[1] + '.holder', JSON.stringify({ pid: process.pid, port: 4321 })), 500);
      setInterval(() => {}, 1000);`;
    const holder = spawn(process.execPath, ['-e', script, db], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`the holder exited ${code}`)));
      });
      const second = await secondServe(db);
      expect(second.code).toBe(1);
      expect(second.err.trim()).toBe(
        `sift: start-up refused: ${db} is in use by another sift (pid ${holder.pid}, port 4321); ` +
          'stop it first or set SIFT_DB to another file',
      );
    } finally {
      holder.kill('SIGKILL');
    }
  }, 60_000);

  it('token create and migrate work beside a server that holds the file', async () => {
    const db = tmpDb();
    const server = await start(db);

    const created = await sift(['token', 'create', 'beside', '--class', 'fleet'], { SIFT_DB: db });
    expect(created.code).toBe(0);
    const token = created.out.trim();
    const jobs = await fetch(`${server.url}/v1/batch`, { headers: { authorization: `Bearer ${token}` } });
    expect(jobs.status).toBe(200);

    const migrated = await sift(['migrate'], { SIFT_DB: db });
    expect(migrated).toMatchObject({ code: 0, out: `database ${db} is up to date\n` });

    // The server still holds the file.
    expect((await secondServe(db)).err.trim()).toBe(refusal(db, server));
  }, 60_000);
});
