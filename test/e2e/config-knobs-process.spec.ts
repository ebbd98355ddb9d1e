import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { waitUntil } from '../support/app';
import { Fixture, send } from '../support/fixture';
import {
  connects,
  ensureBuilt,
  freePort,
  kill,
  startSiftProcess,
  type SiftProcess,
} from '../support/process';

/** The knobs only the server's own process reads (main.ts, shutdown), turned on a real one. */

const TOKEN = 'knob-token-0123456789abcdefghij';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-knobs-')), 'sift.db');

describe('knobs of the sift process', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('SIFT_HOST binds that address only; SIFT_LOG_LEVEL=warn writes warnings, not info lines', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [ensureBuilt()], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        SIFT_DB: tmpDb(),
        SIFT_TOKENS: 'dev-token:dev:fleet',
        SIFT_HOST: '127.0.0.2',
        SIFT_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await waitUntil(async () => {
        if (child.exitCode !== null) throw new Error(`sift exited with ${child.exitCode}: ${out}`);
        return (await fetch(`http://127.0.0.2:${port}/healthz`).catch(() => undefined))?.ok || undefined;
      }, 'sift to answer on 127.0.0.2');
      expect(await connects('127.0.0.1', port)).toBe(false);
      // The development token's warning is written; "listening on …" (info) is not.
      await waitUntil(
        () => (out.includes('the development token') ? true : undefined),
        () => out,
      );
      expect(out).not.toContain('listening on');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('SIFT_SHUTDOWN_GRACE_MS: on SIGTERM, a target that ends within it is done, one that does not is pending again', async () => {
    const held: (() => void)[] = [];
    const fx = await new Fixture({
      '/later': (req, res) => setTimeout(() => send(200, 'text/plain', 'in time')(req, res), 300),
      '/never/*': (req, res) => held.push(() => res.destroy()),
    }).start();
    const db = tmpDb();
    let p: SiftProcess | undefined;
    try {
      p = await startSiftProcess({
        SIFT_DB: db,
        SIFT_TOKENS: `${TOKEN}:ops:fleet`,
        SIFT_FLEET_ALLOW: '127.0.0.0/8',
        SIFT_SHUTDOWN_GRACE_MS: '1500',
        // Two at a time: the third target is still to start when the server stops.
        SIFT_PER_HOST_CONCURRENCY: '2',
      });
      const sub = (await (
        await fetch(`${p.url}/v1/batch`, {
          method: 'POST',
          headers: H,
          body: JSON.stringify({
            targets: [{ url: fx.url('/later') }, { url: fx.url('/never/1') }, { url: fx.url('/never/2') }],
            on_restart: 'resume',
          }),
        })
      ).json()) as { id: string };
      await waitUntil(
        () => (fx.hitCount('/later') && fx.hitCount('/never/1') ? true : undefined),
        'both in flight',
      );
      const t = Date.now();
      await kill(p, 'SIGTERM');
      const took = Date.now() - t;
      expect(took).toBeGreaterThanOrEqual(1500); // it waited for /never, as long as the grace
      expect(took).toBeLessThan(6000); // and no longer (the default is 10 s)
      const d = new Database(db, { readonly: true });
      const rows = d
        .prepare('SELECT idx, status FROM batch_target WHERE job_id = ? ORDER BY idx')
        .all(sub.id);
      d.close();
      expect(rows).toEqual([
        { idx: 0, status: 'done' },
        { idx: 1, status: 'pending' },
        { idx: 2, status: 'pending' },
      ]);
      // One line says what became of the work.
      expect(p.output()).toMatch(
        /stopped on SIGTERM in \d+ ms: of 2 targets in flight 1 finished and 1 went back to their jobs as pending; 0 webhook deliveries/,
      );
    } finally {
      if (p) await kill(p); // ended already, but when a step above failed
      held.splice(0).forEach((h) => h());
      await fx.stop();
    }
  });
});
