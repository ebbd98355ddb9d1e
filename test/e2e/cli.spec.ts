import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Fixture, html, send } from '../support/fixture';
import { ensureBuilt, kill, sift, startSiftProcess, type SiftProcess } from '../support/process';

/** The CLI as a user runs it: a child process, against a real sift process. */
describe('sift CLI', () => {
  let fx: Fixture;
  let server: SiftProcess;
  let db: string;
  let token: string;

  beforeAll(async () => {
    ensureBuilt();
    fx = await new Fixture({
      '/a': send(
        200,
        'text/html',
        html('<article><p>Alpha page has words enough to be read as text.</p></article>', 'Alpha'),
      ),
      '/b': send(200, 'text/plain', 'bravo'),
    }).start();
    db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-cli-')), 'sift.db');
    const migrated = await sift(['migrate'], { SIFT_DB: db });
    expect(migrated.code).toBe(0);
    const created = await sift(['token', 'create', 'cli-user', '--class', 'fleet'], { SIFT_DB: db });
    expect(created.code).toBe(0);
    token = created.out.trim();
    expect(token).toMatch(/^sift_[\w-]{20,}$/);
    server = await startSiftProcess({ SIFT_DB: db, SIFT_FLEET_ALLOW: '127.0.0.0/8' });
  }, 120_000);

  afterAll(async () => {
    await kill(server, 'SIGTERM');
    await fx.stop();
  });

  const client = () => ({ SIFT_URL: server.url, SIFT_TOKEN: token });

  it('stores only the fingerprint of a created token', () => {
    const raw = fs.readFileSync(db);
    expect(raw.includes(Buffer.from(token))).toBe(false);
  });

  it('fetch prints the content, and the title on stderr', async () => {
    const r = await sift(['fetch', fx.url('/a'), '--format', 'text'], client());
    expect(r.code).toBe(0);
    expect(r.out).toContain('Alpha page has words');
    expect(r.err).toContain('# Alpha');
  });

  it('batch --wait reads URLs from stdin, shows progress and writes NDJSON results', async () => {
    const out = path.join(path.dirname(db), 'results.ndjson');
    const r = await sift(
      ['batch', '-', '--wait', '--out', out],
      client(),
      `${fx.url('/a')}\n# a comment\n${fx.url('/b')}\n`,
    );
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/\[#+\] 2\/2/);
    expect(r.err).toMatch(/done/);
    const lines = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.idx, l.status])).toEqual([
      [0, 'done'],
      [1, 'done'],
    ]);
    expect(lines[1].result.content).toBe('bravo');
    const jobs = await sift(['jobs'], client());
    expect(jobs.out).toMatch(/done\s+2\/2/);
  });

  it("cancel of a finished job shows the server's error and hint", async () => {
    const list = await sift(['jobs'], client());
    const id = list.out.split(/\s+/)[0];
    const r = await sift(['cancel', id], client());
    expect(r.code).toBe(2);
    expect(r.err).toContain('not_cancellable');
    expect(r.err).toContain('hint:');
  });

  it('clear errors: bad token, no token, unreachable server, unknown command', async () => {
    expect((await sift(['jobs'], { SIFT_URL: server.url, SIFT_TOKEN: 'wrong-token' })).err).toMatch(
      /unauthorized[\s\S]*hint:/,
    );
    expect((await sift(['jobs'], { SIFT_URL: server.url })).err).toContain('SIFT_TOKEN');
    expect((await sift(['jobs'], { SIFT_URL: 'http://127.0.0.1:9', SIFT_TOKEN: token })).err).toContain(
      'cannot reach sift',
    );
    const bad = await sift(['frobnicate'], {});
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('unknown command');
    expect((await sift(['token', 'create', 'x', '--class', 'admin'], { SIFT_DB: db })).err).toContain(
      '--class fleet',
    );
  });
});
