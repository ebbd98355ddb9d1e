import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSift } from '../support/cli-child';
import { Fixture, html, send, type Handler } from '../support/fixture';
import {
  ensureBuilt,
  kill,
  sift,
  startSiftProcess,
  waitForJobIn,
  type SiftProcess,
} from '../support/process';
import { waitUntil } from '../support/wait';

const TOKEN = 'cli-stops-token-0123456789ab';
const WORDS = 'This page has enough words in it to be read as real content by the extractor. '.repeat(8);
const headers = { authorization: `Bearer ${TOKEN}` };

const ndjson = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { idx: number; status: string });

/**
 * What the CLI says when a job it follows is stopped by something else than itself: the server
 * restarted, stopped or killed under it, Ctrl-C while a restart policy holds. Real sift processes,
 * killed for real; only the server's own `stopping` message is played by a small SSE server.
 */
describe('sift CLI when the server stops', () => {
  let fx: Fixture;
  let dir: string;
  let steady: SiftProcess;
  const started: SiftProcess[] = [];

  const env = (s: SiftProcess) => ({ SIFT_URL: s.url, SIFT_TOKEN: TOKEN });
  /** A sift process on its own database (the same file again for a restart). */
  const serverOn = async (db: string) => {
    const s = await startSiftProcess({
      SIFT_DB: path.join(dir, db),
      SIFT_TOKENS: `${TOKEN}:cli-stops:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
    });
    started.push(s);
    return s;
  };
  /** A URL file of pages that answer (ok) and pages that never do while the test runs (hold). */
  const urls = (name: string, paths: string[]) => {
    const f = path.join(dir, `${name}.txt`);
    fs.writeFileSync(f, paths.map((p) => `${fx.url(p)}\n`).join(''));
    return f;
  };
  const jobOf = (child: { err: () => string }) =>
    waitUntil(() => /job ([0-9a-f-]{36}):/.exec(child.err())?.[1], child.err);

  beforeAll(async () => {
    ensureBuilt();
    const page: Handler = send(200, 'text/html', html(`<article><p>${WORDS}</p></article>`, 'Plain'));
    fx = await new Fixture({ '/ok/*': page, '/hold/*': () => undefined }).start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-cli-stops-'));
    steady = await serverOn('steady.db');
  }, 120_000);

  afterAll(async () => {
    for (const s of started) await kill(s, 'SIGTERM');
    await fx?.stop();
  });

  it('a job failed by a restart shows its error in jobs and watch, with what to do', async () => {
    let s = await serverOn('restarted.db');
    const sent = await sift(['batch', urls('restarted', ['/ok/r1', '/hold/r1', '/hold/r2'])], env(s));
    const id = sent.out.trim();
    await waitForJobIn<{ status: string; targets_done: number }>(s, id, headers, (v) => v.targets_done >= 1);
    await kill(s);
    s = await serverOn('restarted.db');

    const jobs = await sift(['jobs'], env(s));
    expect(jobs.out).toMatch(new RegExp(`^${id} {2}failed {4}3/3 {2}\\S+ {2}server_restarted$`, 'm'));
    const watched = await sift(['watch', id], env(s));
    expect(watched.code).toBe(3);
    expect(watched.err).toContain(`job ${id} failed (server_restarted): 3/3 finished, 2 failed\n`);
    expect(watched.err).toContain(
      `sift: the server restarted while job ${id} was live, and its on_restart is fail; run its failed targets again with: sift retry ${id}`,
    );
  }, 60_000);

  it("Ctrl-C says what the job's on_restart does to it if the server restarts before it ends", async () => {
    const cases: [string[], string][] = [
      [[], 'is failed (server_restarted), as its on_restart is fail'],
      [['--on-restart', 'retry'], 'is run again from the start, as its on_restart is retry'],
      [['--on-restart', 'resume'], 'is resumed (its finished targets kept), as its on_restart is resume'],
    ];
    for (const [i, [flags, fate]] of cases.entries()) {
      const batch = spawnSift(
        ['batch', urls(`policy-${i}`, [`/ok/p${i}`, `/hold/p${i}`]), '--wait', ...flags],
        env(steady),
      );
      const id = await jobOf(batch);
      await waitForJobIn<{ status: string; targets_done: number }>(
        steady,
        id,
        headers,
        (v) => v.targets_done >= 1,
      );
      batch.interrupt();
      expect(await batch.code).toBe(130);
      expect(batch.err()).toContain(
        `job ${id} goes on running on the server\nsift: if the server restarts before job ${id} ends, it ${fate}\n`,
      );
      expect((await sift(['cancel', id], env(steady))).code).toBe(0);
    }
  }, 60_000);

  it('batch --wait --out F on a server killed mid-job: the stopped line and the command that resumes, no empty F, exit 1', async () => {
    let s = await serverOn('killed-batch.db');
    const out = path.join(dir, 'killed-batch.ndjson');
    const file = urls('killed-batch', ['/ok/k1', '/ok/k2', '/hold/k1', '/hold/k2']);
    const batch = spawnSift(['batch', file, '--wait', '--out', out], env(s));
    const id = await jobOf(batch);
    await waitForJobIn<{ status: string; targets_done: number }>(s, id, headers, (v) => v.targets_done >= 2);
    await kill(s);
    expect(await batch.code).toBe(1);
    const err = batch.err();
    expect(err).toContain(
      `\nsift: the server stopped while following job ${id}: lost ${s.url} (from SIFT_URL): `,
    );
    expect(err).toContain(`\nsift: nothing written to ${out}\n`);
    expect(err).toContain(
      `when the server starts again, job ${id} is failed (server_restarted), as its on_restart is fail`,
    );
    expect(err).toMatch(new RegExp(`sift: resume: +sift watch ${id} --out ${out}\n`));
    expect(err).toContain(`sift results ${id} --out ${out}`);
    expect(err).not.toMatch(/at .*\.js:\d+/);
    expect(fs.existsSync(out)).toBe(false);

    // The command it printed, once sift is back: the job failed by the restart, every result written.
    s = await serverOn('killed-batch.db');
    const resumed = await sift(['watch', id, '--out', out], env(s));
    expect(resumed.code).toBe(3);
    expect(resumed.err).toContain(`job ${id} failed (server_restarted)`);
    expect(ndjson(out).map((l) => [l.idx, l.status])).toEqual([
      [0, 'done'],
      [1, 'done'],
      [2, 'failed'],
      [3, 'failed'],
    ]);
  }, 90_000);

  it('watch on a server killed mid-job: plain, and with --out F whose earlier lines stay', async () => {
    const s = await serverOn('killed-watch.db');
    const id = (
      await sift(['batch', urls('killed-watch', ['/ok/w1', '/hold/w1', '/ok/w2'])], env(s))
    ).out.trim();
    await waitForJobIn<{ status: string; targets_done: number }>(s, id, headers, (v) => v.targets_done >= 2);
    const out = path.join(dir, 'killed-watch.ndjson');
    expect((await sift(['results', id, '--out', out], env(s))).code).toBe(0);
    expect(ndjson(out)).toHaveLength(2);

    const plain = spawnSift(['watch', id], env(s));
    const into = spawnSift(['watch', id, '--out', out], env(s));
    for (const w of [plain, into])
      await waitUntil(() => w.err().includes(`job ${id} running`) || undefined, w.err);
    await kill(s);
    expect([await plain.code, await into.code]).toEqual([1, 1]);
    expect(plain.err()).toContain(
      `sift: the server stopped while following job ${id}: lost ${s.url} (from SIFT_URL): `,
    );
    expect(plain.err()).toMatch(new RegExp(`sift: resume: +sift watch ${id}\n`));
    expect(into.err()).toContain(`sift: nothing written to ${out}\n`);
    expect(into.err()).toMatch(new RegExp(`sift: resume: +sift watch ${id} --out ${out}\n`));
    // What the earlier command wrote is still there.
    expect(ndjson(out)).toHaveLength(2);
  }, 60_000);

  it('a server that says it is stopping (event: stopping) ends the follow at once, with the command that resumes', async () => {
    const id = '3f1c2a9e-0000-4000-8000-000000000050';
    const view = {
      id,
      status: 'running',
      error: null,
      targets_total: 3,
      targets_done: 1,
      targets_failed: 0,
      on_restart: 'resume',
    };
    const done = {
      seq: 3,
      type: 'target.done',
      at: new Date().toISOString(),
      data: { idx: 0, status: 'done' },
    };
    let opened = 0;
    // Only the stream's last message is played here: the real server's is being added with it.
    const stopping = await new Fixture({
      [`/v1/batch/${id}`]: send(200, 'application/json', JSON.stringify(view)),
      [`/v1/batch/${id}/events`]: (_req, res) => {
        opened++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`id: 3\nevent: target.done\ndata: ${JSON.stringify(done)}\n\n`);
        res.end('event: stopping\ndata: {"retry_after_s": 7}\n\n');
      },
    }).start('127.0.0.3');
    try {
      const out = path.join(dir, 'told.ndjson');
      const w = await sift(['watch', id, '--out', out], { SIFT_URL: stopping.url(''), SIFT_TOKEN: TOKEN });
      expect(w.code).toBe(1);
      expect(w.err).toContain(
        `sift: the server stopped while following job ${id}: it said it was stopping (try again in 7 s)\n`,
      );
      expect(w.err).toContain(`when the server starts again, job ${id} is resumed`);
      expect(w.err).toMatch(new RegExp(`sift: resume: +sift watch ${id} --out ${out}\n`));
      expect(fs.existsSync(out)).toBe(false);
      expect(opened).toBe(1);
    } finally {
      await stopping.stop();
    }
  });
});
