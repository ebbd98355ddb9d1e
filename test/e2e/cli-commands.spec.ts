import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Fixture, html, send, type Handler } from '../support/fixture';
import {
  ensureBuilt,
  kill,
  ROOT,
  sift,
  startSiftProcess,
  waitForJobIn,
  type SiftProcess,
} from '../support/process';
import { waitUntil } from '../support/wait';
import { datedWorkbook, wordFile } from '../support/office-files';

const CLI = path.join(ROOT, 'dist', 'src', 'cli.js');
const TOKEN = 'cli-commands-token-0123456789';
const WORDS = 'This page has enough words in it to be read as real content by the extractor. '.repeat(8);

/** The CLI as a child whose output is read while it runs, to be sent a signal. */
function spawnSift(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  return { child, code, out: () => out, err: () => err };
}

const ndjson = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { idx: number; status: string; result: { verdict: string } | null });

/** The CLI's commands, flags, exit codes and Ctrl-C, as a user runs them against a real sift process. */
describe('sift CLI commands', () => {
  let fx: Fixture;
  let server: SiftProcess;
  let dir: string;
  let release: () => void = () => undefined;
  let held = new Promise<void>((r) => (release = r));

  const page: Handler = send(200, 'text/html', html(`<article><p>${WORDS}</p></article>`, 'Plain'));
  const client = () => ({ SIFT_URL: server.url, SIFT_TOKEN: TOKEN });
  const headers = { authorization: `Bearer ${TOKEN}` };
  const file = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };

  beforeAll(async () => {
    ensureBuilt();
    fx = await new Fixture({
      '/ok/*': page,
      '/links': send(
        200,
        'text/html',
        html(
          `<article><p>${WORDS} <a href="/elsewhere">Elsewhere</a></p><p id="keep">Kept section. ${WORDS}</p><p class="drop">Dropped words.</p></article>`,
          'Linked',
        ),
      ),
      '/echo': (req, res) =>
        send(200, 'text/plain', `header said ${String(req.headers['x-sift-test'])}`)(req, res),
      '/count': page,
      '/nf': send(404, 'text/html', html('<h1>Not here</h1><p>The page you wanted is gone.</p>', 'Missing')),
      '/hold/*': (req, res) => void held.then(() => page(req, res)),
    }).start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-cli-cmd-'));
    server = await startSiftProcess({
      SIFT_DB: path.join(dir, 'sift.db'),
      SIFT_TOKENS: `${TOKEN}:cli-commands:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
    });
  }, 180_000);

  afterAll(async () => {
    release();
    if (server) await kill(server, 'SIGTERM');
    await fx?.stop();
  });

  it('an unknown or malformed flag is one line of usage and exit 2, never a stack trace', async () => {
    const unknown = await sift(['fetch', fx.url('/ok/1'), '--foo'], client());
    expect([unknown.code, unknown.err]).toEqual([2, 'sift: unknown option --foo for fetch; see sift help\n']);
    const cases: [string[], string][] = [
      [['fetch', fx.url('/ok/1'), '--format'], 'sift: --format for fetch needs a value; see sift help\n'],
      [['fetch', fx.url('/ok/1'), '--links=yes'], 'sift: --links for fetch takes no value; see sift help\n'],
      [['batch', '-', '--bogus'], 'sift: unknown option --bogus for batch; see sift help\n'],
      [['jobs', '--limit', 'two'], 'sift: --limit needs a whole number of at least 1, not "two"\n'],
      [['fetch', 'a', 'b'], 'sift: unexpected argument "b" for fetch; see sift help\n'],
      [['results'], 'sift: results needs a job ID: sift results ID [--out FILE] [--verdict V]\n'],
    ];
    for (const [args, err] of cases) expect([args, (await sift(args, client())).err]).toEqual([args, err]);
    for (const [args] of cases) expect((await sift(args, client())).code).toBe(2);
  });

  it("monitor add, list, runs, pause, resume and rm; their mistakes are usage (2) or the API's (1)", async () => {
    const add = await sift(
      [
        'monitor',
        'add',
        'two pages',
        fx.url('/ok/m1'),
        fx.url('/ok/m2'),
        '--every',
        '86400',
        '--format',
        'text',
      ],
      client(),
    );
    expect([add.code, add.err]).toEqual([
      0,
      expect.stringMatching(/^monitor two pages: every 86400s, first run /),
    ]);
    const id = add.out.trim();
    const listed = await sift(['monitor', 'list'], client());
    expect(listed.out).toContain(`${id}  two pages  every 86400s  `);
    // Its first slot is now: a run starts within a tick, and is read as a job.
    const run = await waitUntil(async () => {
      const r = await sift(['monitor', 'runs', id], client());
      return /^\S+ +done +2\/2 /m.exec(r.out)?.[0];
    }, 'the first run');
    const jobId = run.split(' ')[0];
    const results = await sift(['results', jobId], client());
    expect(
      results.out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).result.changes.status),
    ).toEqual(['new', 'new']);
    expect((await sift(['monitor', 'pause', id], client())).out).toContain('  paused');
    expect((await sift(['monitor', 'resume', id], client())).out).toMatch(/ next \d{4}-/);
    expect(await sift(['monitor', 'rm', id], client())).toEqual({ code: 0, out: `${id} deleted\n`, err: '' });
    expect((await sift(['monitor', 'list'], client())).out).not.toContain(id);

    const cases: [string[], string][] = [
      [
        ['monitor', 'add', 'x', '--every', '60'],
        'sift: monitor add needs the pages: URLs, --file FILE, or --crawl URL (one of them)\n',
      ],
      [
        ['monitor', 'add', 'x', fx.url('/ok/1')],
        'sift: monitor add needs --every SECONDS or --schedule CRON (one of them)\n',
      ],
      [
        ['monitor', 'add', 'x', fx.url('/ok/1'), '--every', 'often'],
        'sift: --every needs a whole number of at least 1, not "often"\n',
      ],
      [['monitor', 'runs'], 'sift: monitor runs needs a monitor ID\n'],
      [['monitor', 'watch'], 'sift: usage: sift monitor add|list|runs|pause|resume|rm; see sift help\n'],
    ];
    for (const [args, err] of cases)
      expect([args, await sift(args, client())]).toEqual([args, { code: 2, out: '', err }]);
    const often = await sift(['monitor', 'add', 'x', fx.url('/ok/1'), '--every', '5'], client());
    expect(often.code).toBe(1);
    expect(often.err).toContain('more often than a fleet caller');
    expect((await sift(['monitor', 'pause', 'no-such-id'], client())).code).toBe(1);
  });

  it('help documents the exit codes', async () => {
    const help = await sift(['help'], {});
    expect(help.code).toBe(0);
    for (const line of [
      /^ {2}0 +done/m,
      /^ {2}1 +error/m,
      /^ {2}2 +usage/m,
      /^ {2}3 +partial/m,
      /^ {2}130 +inter/m,
    ])
      expect(help.out).toMatch(line);
  });

  it('fetch flags reach the API: links, selectors, headers, max age, the envelope as JSON', async () => {
    const linked = await sift(['fetch', fx.url('/links'), '--links'], client());
    expect(linked.code).toBe(0);
    expect(linked.out).toMatch(/links \(1\):\nhttp:\/\/127\.0\.0\.1:\d+\/elsewhere\tElsewhere\n/);

    const kept = await sift(
      ['fetch', fx.url('/links'), '--include-selectors', '#keep', '--format', 'text'],
      client(),
    );
    expect(kept.out).toContain('Kept section.');
    expect(kept.out).not.toContain('Elsewhere');
    const dropped = await sift(['fetch', fx.url('/links'), '--exclude-selectors', '.drop'], client());
    expect(dropped.out).toContain('Kept section.');
    expect(dropped.out).not.toContain('Dropped words');

    const echoed = await sift(['fetch', fx.url('/echo'), '--header', 'X-Sift-Test: hello'], client());
    expect(echoed.out).toContain('header said hello');

    const json = await sift(['fetch', fx.url('/count'), '--json', '--links'], client());
    expect(JSON.parse(json.out)).toMatchObject({ verdict: 'ok', cached: false, links: [] });
    const again = await sift(['fetch', fx.url('/count'), '--json', '--links'], client());
    expect(JSON.parse(again.out).cached).toBe(true);
    const fresh = await sift(['fetch', fx.url('/count'), '--json', '--links', '--max-age-s', '0'], client());
    expect(JSON.parse(fresh.out).cached).toBe(false);
    expect(fx.hitCount('/count')).toBe(2);

    // Several formats of one fetch: the whole envelope, as JSON.
    const formats = await sift(['fetch', fx.url('/links'), '--formats', 'markdown,text,links'], client());
    expect(formats.code).toBe(0);
    const env = JSON.parse(formats.out);
    expect(env.formats.markdown).toContain('Kept section.');
    expect(env.formats.text).toContain('Kept section.');
    expect(env.links.map((l: { text: string }) => l.text)).toEqual(['Elsewhere']);
  });

  it('parse reads a file of this machine: its content, its envelope, its options; a missing file is usage', async () => {
    const word = path.join(dir, 'Отчёт полевой.docx');
    fs.writeFileSync(word, await wordFile());
    const md = await sift(['parse', word], client());
    expect([md.code, md.err]).toEqual([0, '# Quarterly Field Report (HTTP 200, ok)\n']);
    expect(md.out).toContain('# Field Report\n\nThe survey covered three valleys over the spring.');
    // The file's name (not ASCII) is the envelope's; the options reach the API.
    const sheet = path.join(dir, 'dates.xlsx');
    fs.writeFileSync(sheet, await datedWorkbook());
    const json = await sift(['parse', sheet, '--format', 'text', '--tokens', '--json'], client());
    expect(json.code).toBe(0);
    const env = JSON.parse(json.out);
    expect(env).toMatchObject({ url: 'upload:dates.xlsx', format: 'text', status: 200 });
    expect(env.content).toContain('Signed\t2024-03-15');
    expect(env.metadata.tokens).toBeGreaterThan(0);
    expect(JSON.parse((await sift(['parse', word, '--json'], client())).out).url).toBe(
      `upload:${encodeURIComponent('Отчёт полевой.docx')}`,
    );
    const missing = await sift(['parse', path.join(dir, 'none.docx')], client());
    expect([missing.code, missing.err]).toEqual([
      2,
      'sift: cannot read ' + path.join(dir, 'none.docx') + ': ENOENT\n',
    ]);
    // A flag of fetch that reaches a URL is no flag of parse; the server's refusal names the flag.
    expect((await sift(['parse', word, '--render', 'always'], client())).err).toBe(
      'sift: unknown option --render for parse; see sift help\n',
    );
    const bad = await sift(['parse', word, '--pages', '0'], client());
    expect([bad.code, bad.err]).toEqual([1, expect.stringContaining('--pages')]);
  });

  it("the server's refusal of a flag's value names the flag, exit 1", async () => {
    const r = await sift(['fetch', fx.url('/ok/1'), '--timeout-ms', '999999'], client());
    expect(r.code).toBe(1);
    expect(r.err).toContain('--timeout-ms must not be greater than 120000');
  });

  it('fetch of a page the site answers 404 prints it, says why on stderr, and exits 1', async () => {
    const r = await sift(['fetch', fx.url('/nf'), '--format', 'text'], client());
    expect(r.code).toBe(1);
    expect(r.out).toContain('The page you wanted is gone.');
    expect(r.err).toMatch(/HTTP 404.*error_page/);
    expect((await sift(['fetch', fx.url('/ok/1')], client())).code).toBe(0);
  });

  it('a bad line of a URL file is told by its 1-based line and value, with --ignore-invalid-urls in the hint', async () => {
    const urls = file('urls.txt', `# my list\n${fx.url('/ok/1')}\n\n   \nnot-a-url\n${fx.url('/ok/2')}\n`);
    const r = await sift(['batch', urls], client());
    expect(r.code).toBe(1);
    expect(r.err).toContain('line 5: not-a-url: must be an absolute http or https URL');
    expect(r.err).toContain('hint: fix line 5 of');
    expect(r.err).toContain('--ignore-invalid-urls');
    expect(r.err).not.toMatch(/ignore_invalid_urls|targets\.\d/);
  });

  it('batch job flags reach the API; watch exits 3 on a partial job; results pages out NDJSON, with --verdict', async () => {
    const urls = file('mixed.txt', `${fx.url('/links')}\nnot-a-url\n${fx.url('/nf')}\n`);
    const submitted = await sift(
      [
        'batch',
        urls,
        '--ignore-invalid-urls',
        '--include-selectors',
        '#keep',
        '--ttl',
        '3600',
        '--on-restart',
        'resume',
      ],
      client(),
    );
    expect(submitted.code).toBe(0);
    const id = submitted.out.trim();
    const view = await waitForJobIn<{ status: string; ttl_s: number; on_restart: string }>(
      server,
      id,
      headers,
    );
    expect(view).toMatchObject({ status: 'partial', ttl_s: 3600, on_restart: 'resume' });

    const watched = await sift(['watch', id], client());
    expect(watched.code).toBe(3);
    expect(watched.err).toContain(`job ${id} partial: 3/3 finished, 1 failed`);

    const all = await sift(['results', id], client());
    expect(all.code).toBe(0);
    const lines = all.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.idx, l.status])).toEqual([
      [0, 'done'],
      [1, 'failed'],
      [2, 'done'],
    ]);
    expect(lines[0].result.content).toContain('Kept section.');
    expect(lines[0].result.content).not.toContain('Elsewhere');

    const failed = await sift(['results', id, '--status', 'failed'], client());
    expect(
      failed.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).idx),
    ).toEqual([1]);
    const partial = await sift(['jobs', '--status', 'partial'], client());
    expect(
      partial.out
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]),
    ).toEqual([id]);

    const out = path.join(dir, 'error-pages.ndjson');
    const some = await sift(['results', id, '--verdict', 'error_page', '--out', out], client());
    expect(some.code).toBe(0);
    expect(ndjson(out).map((l) => [l.idx, l.result?.verdict])).toEqual([[2, 'error_page']]);
    const bad = await sift(['batch', urls, '--on-restart', 'never'], client());
    expect([bad.code, bad.err]).toEqual([1, expect.stringContaining('--on-restart must be one of')]);

    // The job's pages are found again by their words.
    const found = await sift(['search', 'kept', 'section', '--jobs', id, '--limit', '5'], client());
    expect([found.code, found.err]).toEqual([0, '# 1 page, best first\n']);
    expect(found.out).toContain(`${fx.url('/links')}\n  Linked  (job ${id}, idx 0)\n  `);
    expect(found.out).toMatch(/Kept section/);
    const none = await sift(['search', 'nowhere', '--json'], client());
    expect(JSON.parse(none.out)).toEqual({ hits: [] });
    const empty = await sift(['search'], client());
    expect([empty.code, empty.err]).toEqual([2, expect.stringContaining('search needs words')]);
  });

  it('Ctrl-C during batch --wait writes the finished results and says how to resume or cancel; watch takes it up', async () => {
    const out = path.join(dir, 'interrupted.ndjson');
    const urls = file('held.txt', `${fx.url('/ok/a')}\n${fx.url('/hold/1')}\n${fx.url('/ok/b')}\n`);
    const batch = spawnSift(['batch', urls, '--wait', '--out', out], client());
    const id = await waitUntil(
      () => /job ([0-9a-f-]{36}):/.exec(batch.err())?.[1],
      () => batch.err(),
    );
    await waitForJobIn<{ status: string; targets_done: number }>(
      server,
      id,
      headers,
      (v) => v.targets_done >= 2,
    );
    batch.child.kill('SIGINT');
    expect(await batch.code).toBe(130);
    // The finished targets, whole lines in idx order; the held one has no result yet.
    expect(ndjson(out).map((l) => [l.idx, l.status])).toEqual([
      [0, 'done'],
      [2, 'done'],
    ]);
    expect(fs.readFileSync(out, 'utf8').endsWith('}\n')).toBe(true);
    expect(batch.err()).toContain(`wrote 2 results to ${out}; job ${id} goes on running on the server`);
    expect(batch.err()).toContain(`sift watch ${id} --out ${out}`);
    expect(batch.err()).toContain(`sift results ${id} --out ${out}`);
    expect(batch.err()).toContain(`sift cancel ${id}`);
    expect(batch.err()).not.toMatch(/at .*\.js:\d+/);

    // Ctrl-C during watch, the moment it has said it follows the job: nothing to write, the same
    // advice. Several times: a Ctrl-C right after that line once found no handler yet.
    for (let i = 0; i < 6; i++) {
      const watch = spawnSift(['watch', id], client());
      await waitUntil(
        () => watch.err().includes('running') || undefined,
        () => watch.err(),
      );
      watch.child.kill('SIGINT');
      expect([await watch.code, watch.child.signalCode, watch.err()]).toEqual([
        130,
        null,
        expect.stringContaining(`sift cancel ${id}`),
      ]);
    }

    // Resumed: watch follows the live job to its end and writes every result.
    const resumed = spawnSift(['watch', id, '--out', out], client());
    await waitUntil(
      () => resumed.err().includes('running: 2/3 finished') || undefined,
      () => resumed.err(),
    );
    release();
    expect(await resumed.code).toBe(0);
    expect(resumed.err()).toContain(`job ${id} done: 3/3 finished`);
    expect(ndjson(out).map((l) => [l.idx, l.status])).toEqual([
      [0, 'done'],
      [1, 'done'],
      [2, 'done'],
    ]);
    held = Promise.resolve();
  }, 60_000);

  it('jobs --limit N lists N jobs', async () => {
    for (const n of [1, 2]) {
      const r = await sift(['jobs', '--limit', String(n)], client());
      expect(r.code).toBe(0);
      expect(r.out.trim().split('\n')).toHaveLength(n);
    }
  });

  it('a client command loads none of the server (Nest, the database, the app)', async () => {
    const probe = file(
      'probe.js',
      `process.on('exit', () => {
        const loaded = Object.keys(require.cache).filter((k) =>
          /node_modules\\/(@nestjs|kysely|better-sqlite3|pg|class-validator|reflect-metadata)\\//.test(k) ||
          /dist\\/src\\/(main|app\\.module|dcache|batch|runner|api)\\b/.test(k));
        require('node:fs').writeSync(2, 'LOADED ' + JSON.stringify(loaded) + '\\n');
      });`,
    );
    const run = (args: string[]) =>
      new Promise<string>((resolve) =>
        execFile(
          process.execPath,
          ['--require', probe, CLI, ...args],
          { env: { PATH: process.env.PATH ?? '', ...client() } },
          (_e, _out, err) => resolve(String(err)),
        ),
      );
    for (const args of [
      ['help'],
      ['fetch', fx.url('/ok/1')],
      ['jobs'],
      ['results', '00000000-0000-0000-0000-000000000000'],
    ])
      expect([args[0], /LOADED (.*)/.exec(await run(args))?.[1]]).toEqual([args[0], '[]']);
  });
});
