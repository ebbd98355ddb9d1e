import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSift, spawnSiftOnTerminal } from '../support/cli-child';
import { Fixture, html, send, type Handler } from '../support/fixture';
import { ensureBuilt, kill, sift, startSiftProcess, type SiftProcess } from '../support/process';
import { waitUntil } from '../support/wait';

const TOKEN = 'cli-terminal-token-0123456789';
const WORDS = 'This page has enough words in it to be read as real content by the extractor. '.repeat(8);

/** The progress bar and Ctrl-C as a user sees them on a terminal (a real pseudo-terminal). */
describe('sift CLI on a terminal', () => {
  let fx: Fixture;
  let server: SiftProcess;
  let dir: string;
  const env = () => ({ SIFT_URL: server.url, SIFT_TOKEN: TOKEN });
  const urls = (name: string, paths: string[]) => {
    const f = path.join(dir, `${name}.txt`);
    fs.writeFileSync(f, paths.map((p) => `${fx.url(p)}\n`).join(''));
    return f;
  };

  beforeAll(async () => {
    ensureBuilt();
    const page: Handler = send(200, 'text/html', html(`<article><p>${WORDS}</p></article>`, 'Plain'));
    fx = await new Fixture({
      '/ok/*': page,
      '/hold/*': () => undefined,
      // /slow/N answers after N × 150 ms: the targets of a job end one after another.
      '/slow/*': (req, res) => {
        setTimeout(() => page(req, res), Number(/\/slow\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0) * 150);
      },
    }).start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-cli-terminal-'));
    server = await startSiftProcess({
      SIFT_DB: path.join(dir, 'sift.db'),
      SIFT_TOKENS: `${TOKEN}:cli-terminal:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
    });
  }, 120_000);

  afterAll(async () => {
    if (server) await kill(server, 'SIGTERM');
    await fx?.stop();
  });

  it('Ctrl-C typed under the progress bar: what it says starts on a line of its own', async () => {
    const out = path.join(dir, 'typed.ndjson');
    const file = urls('typed', ['/ok/t1', '/hold/t1']);
    const batch = spawnSiftOnTerminal(
      ['batch', file, '--wait', '--on-restart', 'resume', '--out', out],
      env(),
    );
    await waitUntil(() => batch.err().includes('] 1/2') || undefined, batch.err);
    batch.interrupt();
    expect(await batch.code).toBe(130);
    const shown = batch.err();
    const id = /job ([0-9a-f-]{36}):/.exec(shown)![1];
    const at = shown.indexOf('sift: interrupted');
    expect([at > 0, shown.slice(0, at).endsWith('\n')]).toEqual([true, true]);
    expect(shown).toContain('is resumed (its finished targets kept), as its on_restart is resume');
    expect((await sift(['cancel', id], env())).code).toBe(0);
  }, 60_000);

  it('the bar shows the rate and the time left on one line; without a terminal only its last state', async () => {
    const slow = Array.from({ length: 8 }, (_, i) => `/slow/${i + 1}`);
    const shown = spawnSiftOnTerminal(
      ['batch', urls('slow', slow), '--wait', '--out', path.join(dir, 'slow.ndjson')],
      env(),
    );
    expect(await shown.code).toBe(0);
    const screen = shown.err();
    const bar = screen.slice(screen.indexOf('\r['), screen.indexOf('] 8/8'));
    // Every state rewrites the one line; none ends it before the last.
    expect(bar).not.toContain('\n');
    expect(bar).toMatch(/\] [2-7]\/8 \d+(\.\d+)?\/s, ETA \d+s/);
    expect(screen).toMatch(/\] 8\/8 \d+(\.\d+)?\/s\s*\r\n/);

    const piped = spawnSift(
      [
        'batch',
        urls(
          'piped',
          slow.map((p) => `${p}?piped`),
        ),
        '--wait',
        '--out',
        path.join(dir, 'piped.ndjson'),
      ],
      env(),
    );
    expect(await piped.code).toBe(0);
    expect(piped.err().match(/\[[# ]+\]/g)).toHaveLength(1);
    expect(piped.err()).toMatch(/\] 8\/8\n/);
  }, 60_000);
});
