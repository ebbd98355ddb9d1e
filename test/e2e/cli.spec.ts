import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Fixture, html, send } from '../support/fixture';
import { ensureBuilt, kill, sift, startSiftProcess, type SiftProcess } from '../support/process';
import { Receiver } from '../support/receiver';
import { waitUntil } from '../support/wait';

/** The CLI as a user runs it: a child process, against a real sift process. */
describe('sift CLI', () => {
  let fx: Fixture;
  let server: SiftProcess;
  let db: string;
  let token: string;
  let recovered = false;

  beforeAll(async () => {
    ensureBuilt();
    fx = await new Fixture({
      '/a': send(
        200,
        'text/html',
        // Enough words for the verdict ok: fetch of a page that is not ok exits 1.
        html(
          `<article><p>${'Alpha page has words enough to be read as text. '.repeat(6)}</p></article>`,
          'Alpha',
        ),
      ),
      '/b': send(200, 'text/plain', 'bravo'),
      // Its words show only once its button is clicked.
      '/hidden': send(
        200,
        'text/html',
        html(
          `<article><p>${'A page whose best part is behind a button. '.repeat(6)}</p><button id="show">Show</button><p id="out"></p></article>` +
            `<script>document.getElementById('show').onclick = () => { document.getElementById('out').textContent = 'Shown after the click.' }</script>`,
          'Hidden',
        ),
      ),
      '/flaky': (req, res) => (recovered ? send(200, 'text/plain', 'back')(req, res) : req.socket.destroy()),
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
    // Either may be missing when beforeAll failed part way.
    if (server) await kill(server, 'SIGTERM');
    await fx?.stop();
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

  it('fetch --action takes steps on the rendered page; one that is not JSON is a usage error', async () => {
    const click = JSON.stringify({ type: 'click', selector: '#show' });
    const r = await sift(['fetch', fx.url('/hidden'), '--format', 'text', '--action', click], client());
    expect([r.code, r.err]).toEqual([0, expect.stringContaining('# Hidden')]);
    expect(r.out).toContain('Shown after the click.');
    const bad = await sift(['fetch', fx.url('/hidden'), '--action', 'click #show'], client());
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--action needs one action as JSON');
    const refused = await sift(['fetch', fx.url('/hidden'), '--action', '{"type":"jump"}'], client());
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('--action');
  }, 60_000);

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

  it('a pipeline: batch with a webhook, a TTL and a bad URL; retry of what failed; deliveries; purge', async () => {
    const secretOut = await sift(['webhook-secret'], {});
    const secret = secretOut.out.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const rx = await new Receiver(secret).start();
    try {
      const env = { ...client(), SIFT_WEBHOOK_SECRET: secret };
      const first = await sift(
        ['batch', '-', '--wait', '--ttl', '3600', '--ignore-invalid-urls', '--webhook', rx.url],
        env,
        `${fx.url('/a')}\nnot-a-url\n${fx.url('/flaky')}\n`,
      );
      expect(first.code).toBe(3); // partial
      const id = /job ([0-9a-f-]{36}) partial/.exec(first.err)![1];
      const parent = first.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(parent.map((l) => [l.status, l.error?.code ?? null])).toEqual([
        ['done', null],
        ['failed', 'invalid_url'],
        ['failed', 'connect_error'],
      ]);
      recovered = true;
      const retried = await sift(['retry', id, '--wait'], client());
      expect(retried.code).toBe(0);
      const child = retried.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(child.map((l) => [l.idx, l.parent_idx, l.status])).toEqual([[0, 2, 'done']]);

      await waitUntil(
        () => rx.unique().filter((r) => r.payload.job_id === id).length >= 3 || undefined,
        'deliveries',
      );
      const listed = await sift(['deliveries', id], client());
      expect(listed.code).toBe(0);
      expect(listed.out).toContain(`webhook ${rx.url}`);
      expect(listed.out).toMatch(/1 {2}batch\.queued\s+delivered 1×/);
      expect(listed.out).toMatch(/batch\.partial\s+delivered/);
      expect((await sift(['redeliver', id, '--all'], client())).out).toMatch(/^3 deliveries queued/);

      expect((await sift(['purge', id], client())).out.trim()).toBe(`${id} purged`);
      const gone = await sift(['deliveries', id], client());
      expect(gone.code).toBe(1);
      expect(gone.err).toContain('not_found');
      const noSecret = await sift(['batch', '-', '--webhook', rx.url], client(), fx.url('/a'));
      expect(noSecret.err).toContain('SIFT_WEBHOOK_SECRET');
    } finally {
      await rx.stop();
    }
  });

  it("cancel of a finished job shows the server's error and hint", async () => {
    const list = await sift(['jobs'], client());
    const id = list.out.split(/\s+/)[0];
    const r = await sift(['cancel', id], client());
    expect(r.code).toBe(1);
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
