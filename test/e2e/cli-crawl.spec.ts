import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Fixture, html, send, type Handler } from '../support/fixture';
import {
  ensureBuilt,
  kill,
  sift,
  startSiftProcess,
  waitForJobIn,
  type SiftProcess,
} from '../support/process';

const TOKEN = 'cli-crawl-token-0123456789abc';
const WORDS = 'This page has enough words in it to be read as real content by the extractor. '.repeat(6);

/** A page of its own words (no two bodies alike) with links to `links`. */
const page = (name: string, links: string[]): Handler =>
  send(
    200,
    'text/html',
    html(
      `<nav>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</nav><article><h1>${name}</h1><p>${name}: ${WORDS}</p></article>`,
      name,
    ),
  );

interface Line {
  idx: number;
  status: string;
  depth: number;
  parent_idx: number | null;
}

/** `sift crawl` and `sift map` as a user runs them, against a real sift process and a small site. */
describe('sift crawl and map', () => {
  let fx: Fixture;
  let server: SiftProcess;
  let dir: string;
  const client = () => ({ SIFT_URL: server.url, SIFT_TOKEN: TOKEN });
  const headers = { authorization: `Bearer ${TOKEN}` };

  beforeAll(async () => {
    ensureBuilt();
    // Eight pages: the seed links to three, they to three more (and back), and one page only the
    // sitemap names. The sitemap names a linked page too, which must not come twice. The llms.txt
    // names a page two hops away.
    fx = await new Fixture({
      '/': page('Home', ['/a', '/b', '/c']),
      '/a': page('Alpha', ['/a1', '/a2', '/']),
      '/b': page('Bravo', ['/b1']),
      '/c': page('Charlie', ['/']),
      '/a1': page('Alpha one', []),
      '/a2': page('Alpha two', []),
      '/b1': page('Bravo one', []),
      '/orphan': page('Orphan', []),
      '/llms.txt': send(200, 'text/plain', '# Home\n\n- [The first of Bravo](/b1): a page\n'),
      '/robots.txt': (req, res) =>
        send(
          200,
          'text/plain',
          `User-agent: *\nAllow: /\nSitemap: http://${req.headers.host}/sitemap.xml\n`,
        )(req, res),
      '/sitemap.xml': (req, res) =>
        send(
          200,
          'application/xml',
          `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[
            '/orphan',
            '/a',
          ]
            .map((p) => `<url><loc>http://${req.headers.host}${p}</loc></url>`)
            .join('')}</urlset>`,
        )(req, res),
    }).start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-cli-crawl-'));
    server = await startSiftProcess({
      SIFT_DB: path.join(dir, 'sift.db'),
      SIFT_TOKENS: `${TOKEN}:cli-crawl:fleet`,
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
    });
  }, 180_000);

  afterAll(async () => {
    if (server) await kill(server, 'SIGTERM');
    await fx?.stop();
  });

  it('crawl --limit 5 --wait --out writes 5 NDJSON results with depth and parent_idx, shows the growing total, exits 0', async () => {
    const out = path.join(dir, 'crawl.ndjson');
    const r = await sift(['crawl', fx.url('/'), '--limit', '5', '--wait', '--out', out], client());
    expect([r.code, r.out]).toEqual([0, '']);
    expect(r.err).toMatch(/^job [0-9a-f-]{36}: crawl of http:\/\/127\.0\.0\.1:\d+\/, at most 5 pages\n/);
    // The seed's page is one target at first; the bar's total grows with the links it adds.
    expect(r.err).toMatch(/\] 5\/5\n/);
    expect(r.err).toMatch(/job [0-9a-f-]{36} done: 5\/5 finished\n/);
    const lines = fs
      .readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
    expect(lines.map((l) => [l.idx, l.status])).toEqual([0, 1, 2, 3, 4].map((i) => [i, 'done']));
    expect(lines[0]).toMatchObject({ depth: 0, parent_idx: null });
    // The rest are the seed's links (found on idx 0) and the sitemap's orphan (found on no page).
    for (const l of lines.slice(1)) expect(l.depth).toBe(1);
    expect(
      lines
        .slice(1)
        .map((l) => l.parent_idx)
        .sort(),
    ).toEqual([0, 0, 0, null]);
  }, 60_000);

  it('crawl without --wait prints the job id, and its flags reach the job', async () => {
    const r = await sift(['crawl', fx.url('/'), '--limit', '3', '--max-depth', '0'], client());
    expect(r.code).toBe(0);
    const id = r.out.trim();
    expect(r.out).toMatch(/^[0-9a-f-]{36}\n$/);
    const view = await waitForJobIn<{ status: string; kind: string; limit: number; targets_total: number }>(
      server,
      id,
      headers,
    );
    // No hop from the seed: the seed is the crawl's one page.
    expect(view).toMatchObject({ status: 'done', kind: 'crawl', limit: 3, targets_total: 1 });
  }, 60_000);

  it('map lists the page links and the sitemap entries, each once; --json is the whole answer', async () => {
    const r = await sift(['map', fx.url('/')], client());
    expect(r.code).toBe(0);
    expect(r.out).toBe(['/', '/a', '/b', '/c', '/orphan'].map((p) => `${fx.url(p)}\n`).join(''));
    expect(r.err).toBe('# 5 URLs: 4 from the page, 1 from sitemaps\n');
    const listed = await sift(['map', fx.url('/'), '--llms-txt', 'include'], client());
    expect(listed.err).toBe('# 6 URLs: 4 from the page, 1 from llms.txt, 1 from sitemaps\n');
    expect(listed.out.split('\n')[4]).toBe(fx.url('/b1'));
    const only = await sift(['map', fx.url('/'), '--llms-txt', 'only'], client());
    expect([only.code, only.out]).toEqual([0, `${fx.url('/b1')}\n`]);

    // A comma inside braces is the glob's, not a second glob.
    const json = await sift(['map', fx.url('/'), '--include-paths', '/{a,orphan}', '--json'], client());
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out).links).toEqual([
      { url: fx.url('/'), title: 'Home', source: 'page' },
      { url: fx.url('/a'), title: '/a', source: 'page' },
      { url: fx.url('/orphan'), title: null, source: 'sitemap' },
    ]);
  });

  it('a bad flag is one line of usage and exit 2', async () => {
    const cases: [string[], string][] = [
      [['crawl', fx.url('/'), '--bogus'], 'sift: unknown option --bogus for crawl; see sift help\n'],
      [
        ['crawl', fx.url('/'), '--limit', 'many'],
        'sift: --limit needs a whole number of at least 1, not "many"\n',
      ],
      [
        ['crawl', fx.url('/'), '--out', 'f.ndjson'],
        'sift: --out needs --wait (or use: sift results ID --out FILE)\n',
      ],
      [['map', fx.url('/'), '--wait'], 'sift: unknown option --wait for map; see sift help\n'],
      [['map'], 'sift: map needs a URL: sift map URL [options]; see sift help\n'],
      [['llmstxt'], 'sift: llmstxt needs a URL to start from: sift llmstxt URL [options]; see sift help\n'],
      [
        ['llmstxt', fx.url('/'), '--full', '--out', 'd'],
        'sift: --out writes both files; --full is for stdout\n',
      ],
    ];
    for (const [args, err] of cases) {
      const r = await sift(args, client());
      expect([args, r.code, r.err]).toEqual([args, 2, err]);
    }
  });

  it('llmstxt follows its job, then writes llms.txt; --out both files; --job reads a job again', async () => {
    const r = await sift(['llmstxt', fx.url('/'), '--limit', '4'], client());
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^job ([0-9a-f-]{36}): llms\.txt of http:\/\/127\.0\.0\.1:\d+\/\n/);
    expect(r.err).toMatch(/job [0-9a-f-]{36} done: 4\/4 finished\n/);
    const id = /^job ([0-9a-f-]{36})/.exec(r.err)![1];
    // The pages have no description of their own: each is described by its first words.
    const lines = r.out.split('\n');
    expect(lines.slice(0, 2)).toEqual(['# Home', '']);
    expect(lines[2]).toMatch(/^> Home: This page has enough words .{100,}…$/);
    expect(lines.slice(3, 6)).toEqual(['', '## Pages', '']);
    const listed = ['/', '/a', '/b', '/c'].map((p, i) => [p, ['Home', 'Alpha', 'Bravo', 'Charlie'][i]]);
    for (const [i, [p, title]] of listed.entries()) {
      expect(
        lines[6 + i].startsWith(`- [${title}](${fx.url(p)}): ${title}: This page has enough words`),
      ).toBe(true);
    }
    expect(lines.slice(10)).toEqual(['']);
    const out = path.join(dir, 'llms');
    const again = await sift(['llmstxt', '--job', id, '--out', out], client());
    expect(again.code).toBe(0);
    expect(fs.readFileSync(path.join(out, 'llms.txt'), 'utf8')).toBe(r.out);
    const full = fs.readFileSync(path.join(out, 'llms-full.txt'), 'utf8');
    expect(full).toContain(`\n# Alpha\n\nSource: ${fx.url('/a')}\n\nAlpha: This page has enough words`);
    expect(again.err).toMatch(/wrote .*llms-full\.txt \(\d+ bytes\)\n$/);
    const stdout = await sift(['llmstxt', '--job', id, '--full'], client());
    expect(stdout.out).toBe(full);
  }, 60_000);

  it("a crawl over the class's page limit exits 1 with sift's message, naming the flag", async () => {
    const r = await sift(['crawl', fx.url('/'), '--limit', '10001'], client());
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain('--limit 10001 is over the 10000 pages a fleet caller may crawl in one job');
    expect(r.err).toContain('hint: ask for at most 10000');
  });
});
