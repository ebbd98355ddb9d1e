import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { createPgDatabase } from '../support/backends';
import { startCrawlSite, TRAPS, type CrawlSite } from '../support/crawl-site';
import { kill, startSiftProcess, waitForJobIn, type SiftProcess } from '../support/process';
import { prng } from '../support/prng';
import { waitUntil } from '../support/wait';

const TOKEN = 'crawl-crash-token';
const H = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const SEED = Number(process.env.SIFT_CRASH_SEED ?? 3606);
/** Targets one process fetches at once: at most this many are lost in flight by one kill. */
const CONCURRENCY = 8;
const KILLS = 3;
const EXPECTED = { maxDepth: 6, sitemap: 'include' } as const;
const ENV = {
  SIFT_TOKENS: `${TOKEN}:cc:fleet`,
  SIFT_FLEET_ALLOW: '127.0.0.0/8',
  SIFT_RUNNER_CONCURRENCY: String(CONCURRENCY),
  SIFT_PER_HOST_CONCURRENCY: String(CONCURRENCY),
};

/** A crawl job as stored: its row, its targets and its events. */
interface Stored {
  job: { status: string; targets_total: number; targets_done: number };
  rows: { idx: number; status: string; canonical: string; holder: string | null }[];
  events: { seq: number; type: string; data: { idx?: number } }[];
}

const SQL = {
  job: 'SELECT status, targets_total, targets_done FROM batch_job WHERE id = $1',
  rows: 'SELECT idx, status, canonical, holder FROM batch_target WHERE job_id = $1 ORDER BY idx',
  events: 'SELECT seq, type, data FROM batch_event WHERE job_id = $1 ORDER BY seq',
};

const stored = (job: Record<string, unknown>, rows: Stored['rows'], events: Record<string, unknown>[]) => ({
  job: {
    status: String(job.status),
    targets_total: Number(job.targets_total),
    targets_done: Number(job.targets_done),
  },
  rows: rows.map((r) => ({ ...r, idx: Number(r.idx) })),
  events: events.map((e) => ({ seq: Number(e.seq), type: String(e.type), data: JSON.parse(String(e.data)) })),
});

function readSqlite(file: string, id: string): Stored {
  const d = new Database(file, { readonly: true });
  try {
    const q = (s: string) => d.prepare(s.replace('$1', '?'));
    return stored(
      q(SQL.job).get(id) as Record<string, unknown>,
      q(SQL.rows).all(id) as Stored['rows'],
      q(SQL.events).all(id) as Record<string, unknown>[],
    );
  } finally {
    d.close();
  }
}

/** One snapshot: the other instances keep writing while it is read. */
async function readPg(db: Client, id: string): Promise<Stored> {
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    const q = async (text: string) => (await db.query(text, [id])).rows;
    return stored((await q(SQL.job))[0], await q(SQL.rows), await q(SQL.events));
  } finally {
    await db.query('COMMIT');
  }
}

const finished = (status: string) => status === 'done' || status === 'failed';
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);
const pageIdxs = (events: { type: string; data: { idx?: number } }[]) =>
  events.filter((e) => e.type === 'crawl.page').map((e) => e.data.idx!);

/**
 * What holds at any moment, a kill included: gapless events, targets 0..total-1 each with its own
 * canonical URL, and exactly one crawl.page event for each finished target (none for the others:
 * a page's event commits with its result).
 */
function checkStored(s: Stored, before?: Stored): void {
  expect(s.events.map((e) => e.seq)).toEqual(upTo(s.events.length).map((i) => i + 1));
  expect(s.rows.map((r) => r.idx)).toEqual(upTo(s.job.targets_total));
  expect(new Set(s.rows.map((r) => r.canonical)).size).toBe(s.rows.length);
  const ended = s.rows.filter((r) => finished(r.status)).map((r) => r.idx);
  expect(pageIdxs(s.events).sort((a, b) => a - b)).toEqual(ended);
  expect(s.job.targets_done).toBe(ended.length);
  if (!before) return;
  // Nothing finished before is lost, no event rewritten.
  expect(before.rows.filter((r) => r.status === 'done' && s.rows[r.idx].status !== 'done')).toEqual([]);
  expect(s.events.slice(0, before.events.length)).toEqual(before.events);
}

/**
 * The pages whose targets the killed process held (claimed, not yet written) at a kill: the only
 * ones it may have been fetching, so the only ones a later instance may request again.
 */
function noteCaught(site: CrawlSite, s: Stored, caught: Map<string, number>, holder?: string): void {
  for (const r of s.rows) {
    if (r.status !== 'running' || (holder !== undefined && r.holder !== holder)) continue;
    const k = site.keyOf(r.canonical);
    caught.set(k, (caught.get(k) ?? 0) + 1);
  }
}

/** The page a request was for: the site answers every spelling of a path (query, trailing slash) alike. */
const pageOf = (raw: string) => {
  const p = raw.split('?')[0];
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
};
const isPage = (p: string) => p !== '/robots.txt' && p !== '/llms.txt' && !p.startsWith('/sitemap');

function pageHits(site: CrawlSite): Map<string, number> {
  const out = new Map<string, number>();
  for (const [raw, n] of site.hits) out.set(pageOf(raw), (out.get(pageOf(raw)) ?? 0) + n);
  return out;
}

/** Waits until the site has answered `n` page requests in all, while `alsoWhen` holds. */
async function untilPages(site: CrawlSite, n: number, alsoWhen: () => Promise<boolean> = async () => true) {
  const count = () => [...pageHits(site)].reduce((t, [p, k]) => t + (isPage(p) ? k : 0), 0);
  await waitUntil(
    async () => (count() >= n && (await alsoWhen())) || undefined,
    () => `${n} page requests (seen ${count()})`,
    60_000,
    10,
  );
}

async function submitCrawl(p: SiftProcess, site: CrawlSite): Promise<string> {
  const res = await fetch(`${p.url}/v1/crawl`, {
    method: 'POST',
    headers: H,
    body: JSON.stringify({
      url: `${site.origin}/`,
      limit: 1000,
      max_depth: 6,
      sitemap: 'include',
      on_restart: 'resume',
    }),
  });
  const body = (await res.json()) as { id: string; kind: string };
  expect([res.status, body.kind]).toEqual([202, 'crawl']);
  return body.id;
}

/** Every page of a paged list (results by idx, events by seq). */
async function readAll<T>(p: SiftProcess, route: string, key: 'results' | 'events'): Promise<T[]> {
  const all: T[] = [];
  for (let after: number | null = key === 'results' ? -1 : 0; after !== null;) {
    const page = (await (
      await fetch(`${p.url}${route}?limit=1000&after=${after}`, { headers: H })
    ).json()) as Record<string, unknown>;
    all.push(...(page[key] as T[]));
    after = page.next as number | null;
  }
  return all;
}

type Result = { idx: number; url: string; status: string; duplicate_of: number | null };
type Event = { seq: number; type: string; data: { idx?: number; status?: string; duplicate_of?: number } };

/**
 * The ended crawl, read through the API: done with the pages a correct crawl fetches, each target
 * once with one crawl.page event, gapless events; at the site, each page requested once but for
 * those a kill caught in flight (`caught`: at most `kills` × CONCURRENCY in all), nothing disallowed
 * and nothing beyond the crawl's pages, robots.txt and sitemaps.
 */
async function checkEnded(
  p: SiftProcess,
  site: CrawlSite,
  id: string,
  kills: number,
  caught: Map<string, number>,
): Promise<void> {
  const view = await waitForJobIn<{ status: string; targets_total: number; targets_done: number }>(
    p,
    id,
    H,
    undefined,
    90_000,
  );
  expect(view).toMatchObject({ status: 'done', targets_done: view.targets_total });
  const results = await readAll<Result>(p, `/v1/batch/${id}/results`, 'results');
  const expected = site.expected(EXPECTED);
  expect(results.map((r) => r.idx)).toEqual(upTo(view.targets_total));
  expect(results.length).toBe(expected.size);
  expect(new Set(results.map((r) => site.keyOf(r.url)))).toEqual(expected);
  expect(results.filter((r) => r.status !== 'done')).toEqual([]);

  const events = await readAll<Event>(p, `/v1/batch/${id}/events`, 'events');
  expect(events.map((e) => e.seq)).toEqual(upTo(events.length).map((i) => i + 1));
  const pages = events.filter((e) => e.type === 'crawl.page');
  expect(pages.map((e) => e.data.idx).sort((a, b) => a! - b!)).toEqual(upTo(view.targets_total));
  for (const e of pages) {
    const r = results[e.data.idx!];
    expect([r.idx, e.data.status, e.data.duplicate_of ?? null]).toEqual([r.idx, r.status, r.duplicate_of]);
  }

  const hits = pageHits(site);
  for (const k of TRAPS.private) expect([k, hits.get(k) ?? 0]).toEqual([k, 0]);
  expect([...hits.keys()].filter((k) => isPage(k) && !expected.has(k))).toEqual([]);
  // A redirect's target is requested once more by every request of the redirect.
  const allowed = (k: string) => 1 + (site.redirectTargets.has(k) ? (hits.get(TRAPS.redirect) ?? 0) : 0);
  const counts = [...expected].map((page) => ({
    page,
    requests: hits.get(page) ?? 0,
    allowed: allowed(page),
    caught: caught.get(page) ?? 0,
  }));
  expect(counts.filter((c) => c.requests < 1 || c.requests - c.allowed > c.caught)).toEqual([]);
  const again = counts.reduce((t, c) => t + Math.max(0, c.requests - c.allowed), 0);
  console.log(
    `crawl-crash seed ${SEED}: ${kills} kill(s), ${again} page request(s) repeated, ` +
      `${[...caught.values()].reduce((a, b) => a + b, 0)} target(s) held at the kills ` +
      `(at most ${kills * CONCURRENCY} could have been in flight)`,
  );
  expect(again).toBeLessThanOrEqual(kills * CONCURRENCY);
}

describe('SIGKILL at random moments of a 500-page crawl (on_restart: resume)', () => {
  let site: CrawlSite;
  let procs: SiftProcess[] = [];
  beforeEach(async () => {
    site = await startCrawlSite({ pages: 500, seed: 36 });
  });
  afterEach(async () => {
    for (const p of procs) await kill(p, 'SIGKILL');
    procs = [];
    await site.close();
  });

  it(`one process on SQLite, killed ${KILLS} times (seed ${SEED}): the same pages, each once, events gapless`, async () => {
    const rand = prng(SEED);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-ccrash-')), 'sift.db');
    const env = { ...ENV, SIFT_DB: file };
    procs = [await startSiftProcess(env)];
    const id = await submitCrawl(procs[0], site);
    let before: Stored | undefined;
    const caught = new Map<string, number>();
    let mark = 0;
    for (let k = 0; k < KILLS; k++) {
      // The k-th kill after 1–150 more page requests: the last comes before the 501st page.
      mark += 1 + Math.floor(rand() * 150);
      await untilPages(site, mark);
      await kill(procs[0], 'SIGKILL');
      const now = readSqlite(file, id);
      // Killed mid-crawl, not after it.
      expect(now.job.status).not.toBe('done');
      checkStored(now, before);
      noteCaught(site, now, caught);
      before = now;
      procs = [await startSiftProcess(env)];
    }
    await checkEnded(procs[0], site, id, KILLS, caught);
    checkStored(readSqlite(file, id), before);
  }, 150_000);

  it(`three instances on PostgreSQL, one killed (seed ${SEED}): the survivors end it the same`, async () => {
    const rand = prng(SEED);
    const pg = await createPgDatabase();
    const db = new Client({ connectionString: pg.url });
    try {
      // Heartbeats every second and a lost instance recovered after 3 s (see crash-random-instances).
      const env = { ...ENV, SIFT_DATABASE_URL: pg.url, SIFT_HEARTBEAT_S: '1', SIFT_INSTANCE_TTL_S: '3' };
      // One after another: three starts at once on two busy cores can pass /healthz's deadline.
      for (let i = 0; i < 3; i++) procs.push(await startSiftProcess(env));
      await db.connect();
      db.on('error', () => undefined);
      const id = await submitCrawl(procs[0], site);
      const victim = 1 + Math.floor(rand() * 2);
      const instance = ((await (await fetch(`${procs[victim].url}/healthz`)).json()) as { instance: string })
        .instance;
      // Killed after 40–240 page requests, while it holds some of the crawl's targets.
      const holds = async () =>
        (
          await db.query(
            `SELECT 1 FROM batch_target WHERE job_id = $1 AND status = 'running' AND holder = $2`,
            [id, instance],
          )
        ).rowCount! > 0;
      await untilPages(site, 40 + Math.floor(rand() * 200), holds);
      await kill(procs[victim], 'SIGKILL');
      const before = await readPg(db, id);
      checkStored(before);
      const caught = new Map<string, number>();
      noteCaught(site, before, caught, instance);
      await checkEnded(procs[0], site, id, 1, caught);
      checkStored(await readPg(db, id), before);
    } finally {
      await db.end().catch(() => undefined);
      for (const p of procs) await kill(p, 'SIGKILL');
      await pg.drop();
    }
  }, 120_000);
});
