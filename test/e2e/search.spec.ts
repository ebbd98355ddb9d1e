import type { INestApplication } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import request from 'supertest';
import { migrations } from '../../migrations';
import { Dcache, migrate, openSqlite } from '../../src/dcache';
import { openPostgres } from '../../src/dcache/postgres';
import { SweeperService } from '../../src/runner/sweeper.service';
import {
  createTestApp,
  fleet,
  FLEET_TOKEN,
  restricted,
  RESTRICTED_TOKEN,
  TestClock,
  tmpDbPath,
  waitForJob,
  waitUntil,
} from '../support/app';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { Fixture, html, send } from '../support/fixture';

/** POST /v1/search over the pages of a caller's own jobs, on both databases. */

const page = (title: string, words: string) =>
  html(
    `<article><h1>${title}</h1>${[0, 1, 2, 3]
      .map(
        (k) =>
          `<p>${words} Paragraph ${k} goes on about it at some length, so that it reads as an article.</p>`,
      )
      .join('')}</article>`,
    title,
  );

/** A second fleet caller: fleet callers may fetch the fixture's loopback address. */
const OTHER = { Authorization: 'Bearer other-fleet-token' };
const TOKENS = `${FLEET_TOKEN}:fleet-caller:fleet,other-fleet-token:other-caller:fleet,${RESTRICTED_TOKEN}:restricted-caller:restricted`;

/** A small docs site: each page about one thing. */
const DOCS: Record<string, [string, string]> = {
  '/install': [
    'Installing on Linux',
    'Install the package with apt on Debian or Ubuntu, then start the daemon.',
  ],
  '/billing': [
    'Billing and invoices',
    'Invoices are sent monthly; billing questions go to the accounts team.',
  ],
  '/tokens': ['API tokens', 'Create a bearer token for each program; revoke a token that leaked.'],
  '/backup': ['Backups', 'Copy the database file nightly; restore it by stopping the server first.'],
};

describe.each(BACKENDS)('search on %s', (backend) => {
  let app: INestApplication;
  let fx: Fixture;
  let pg: { url: string; drop: () => Promise<void> } | undefined;
  const clock = new TestClock(1_800_000_000_000);
  const http = () => request(app.getHttpServer());
  const search = async (body: object, who = fleet) => {
    const r = await http().post('/v1/search').set(who).send(body);
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    return r.body.hits as {
      url: string;
      title: string;
      snippet: string;
      score: number;
      job_id: string;
      idx: number;
    }[];
  };
  const batch = async (paths: string[], who = fleet, extra: object = {}) => {
    const sub = await http()
      .post('/v1/batch')
      .set(who)
      .send({ targets: paths.map((p) => ({ url: fx.url(p) })), ...extra });
    expect(sub.status).toBe(202);
    const job = await waitForJob(app, sub.body.id, who);
    expect(job.status).toBe('done');
    return sub.body.id as string;
  };
  const docsOf = async (jobId: string) => {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM search_doc WHERE job_id = ${jobId}`.execute(
      app.get(Dcache).kysely,
    );
    return Number(r.rows[0].n);
  };

  beforeAll(async () => {
    const pages: Record<string, ReturnType<typeof send>> = {};
    for (const [p, [title, words]] of Object.entries(DOCS)) {
      pages[p] = send(200, 'text/html', page(title, words));
      pages[`/other${p}`] = send(200, 'text/html', page(`${title} (copy)`, words));
    }
    // What PostgreSQL's text refuses (NUL), and a lone surrogate by an entity.
    pages['/nul'] = send(200, 'text/plain', 'The lighthouse keeper\u0000 logs every passing ship at dusk.');
    pages['/lone'] = send(200, 'text/html', page('Surrogates', 'The harbourmaster &#xD800; counts ferries.'));
    fx = await new Fixture(pages).start();
    pg = backend === 'postgres' ? await createPgDatabase() : undefined;
    ({ app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_TOKENS: TOKENS, ...(pg ? { SIFT_DATABASE_URL: pg.url } : {}) },
      { clock },
    ));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
    await pg?.drop();
  });

  it("finds the pages of the caller's jobs, best first, with their job and idx and a snippet", async () => {
    const id = await batch(Object.keys(DOCS));
    const install = await search({ query: 'install debian' });
    expect(install[0]).toMatchObject({
      url: fx.url('/install'),
      title: 'Installing on Linux',
      job_id: id,
      idx: 0,
    });
    expect(install[0].snippet).toMatch(/Debian/);
    expect(install[0].score).toBeGreaterThan(0);
    // Every word is needed; English words match their other forms; punctuation only separates.
    expect((await search({ query: 'invoice' })).map((h) => h.url)).toEqual([fx.url('/billing')]);
    expect((await search({ query: 'revoking tokens!' })).map((h) => h.url)).toEqual([fx.url('/tokens')]);
    expect(await search({ query: 'invoices debian' })).toEqual([]);
    // A title word ranks its page above one that only says it.
    const ranked = await search({ query: 'backups' });
    expect(ranked[0].url).toBe(fx.url('/backup'));
    expect(await search({ query: 'paragraph', limit: 2 })).toHaveLength(2);
  });

  it("never finds another caller's pages; jobs and site narrow the search", async () => {
    const mine = await batch(['/other/install']);
    expect(await search({ query: 'install debian' }, restricted)).toEqual([]);
    expect(await search({ query: 'install debian' }, OTHER)).toEqual([]);
    const theirs = await batch(['/other/billing'], OTHER);
    expect((await search({ query: 'invoices' }, OTHER)).map((h) => h.job_id)).toEqual([theirs]);
    expect((await search({ query: 'invoices', jobs: [theirs] })).length).toBe(0);
    const both = await search({ query: 'install debian' });
    expect(both.map((h) => h.url).sort()).toEqual([fx.url('/install'), fx.url('/other/install')].sort());
    expect((await search({ query: 'install debian', jobs: [mine] })).map((h) => h.url)).toEqual([
      fx.url('/other/install'),
    ]);
    const host = new URL(fx.url('/')).host;
    expect((await search({ query: 'install debian', site: host })).length).toBe(2);
    expect(await search({ query: 'install debian', site: 'example.com' })).toEqual([]);
  });

  it('a deleted job is gone from the index with it; a swept one too', async () => {
    const id = await batch(['/tokens', '/backup']);
    expect(await docsOf(id)).toBe(2);
    expect((await search({ query: 'nightly', jobs: [id] })).length).toBe(1);
    const del = await http().delete(`/v1/batch/${id}`).query({ purge: 'true' }).set(fleet);
    expect(del.status).toBeLessThan(300);
    // Gone as the job is: no moment where the job is gone and its pages are still found.
    expect(await http().get(`/v1/batch/${id}`).set(fleet)).toMatchObject({ status: 404 });
    expect(await docsOf(id)).toBe(0);
    expect(await search({ query: 'nightly', jobs: [id] })).toEqual([]);

    const swept = await batch(['/billing'], fleet, { ttl_s: 60 });
    expect(await docsOf(swept)).toBe(1);
    clock.t += 61_000;
    await app.get(SweeperService).tick();
    expect(await docsOf(swept)).toBe(0);
    clock.t -= 61_000;
  });

  it('a page fetched outside a job is found (job_id null), its latest fetch only, by its caller only, until it ages out', async () => {
    const url = fx.url('/backup');
    const fetched = await http().post('/v1/fetch').set(OTHER).send({ url });
    expect(fetched.status).toBe(200);
    // Indexed after the answer: found once written.
    const hits = await waitUntil(async () => {
      const h = await search({ query: 'nightly restore' }, OTHER);
      return h.length > 0 ? h : undefined;
    }, 'the fetched page to be indexed');
    expect(hits).toEqual([expect.objectContaining({ url, title: 'Backups', job_id: null, idx: null })]);
    expect((await search({ query: 'nightly restore' })).every((h) => h.job_id !== null)).toBe(true);
    // Fetched again: still one document of it.
    await http().post('/v1/fetch').set(OTHER).send({ url, max_age_s: 0 });
    const rows = await sql<{
      n: number;
    }>`SELECT count(*) AS n FROM search_doc WHERE job_id IS NULL AND url = ${url}`.execute(
      app.get(Dcache).kysely,
    );
    expect(Number(rows.rows[0].n)).toBe(1);
    // Not fetched again for SIFT_HISTORY_TTL_S (30 days): forgotten by the sweep.
    clock.t += 31 * 86400_000;
    await app.get(SweeperService).tick();
    clock.t -= 31 * 86400_000;
    expect(await search({ query: 'nightly restore' }, OTHER)).toEqual([]);
  });

  it('a page holding NUL or a lone surrogate is stored, indexed and found; jobs: [] finds nothing', async () => {
    const id = await batch(['/nul', '/lone']);
    expect((await search({ query: 'lighthouse keeper', jobs: [id] })).map((h) => h.url)).toEqual([
      fx.url('/nul'),
    ]);
    expect((await search({ query: 'harbourmaster ferries', jobs: [id] })).map((h) => h.url)).toEqual([
      fx.url('/lone'),
    ]);
    expect(await search({ query: 'lighthouse', jobs: [] })).toEqual([]);
  });

  it('a result asked as chunks alone is found by its words', async () => {
    const id = await batch(['/install'], fleet, { options: { formats: ['chunks'] } });
    expect(await docsOf(id)).toBe(1);
    expect((await search({ query: 'install debian', jobs: [id] })).map((h) => [h.url, h.idx])).toEqual([
      [fx.url('/install'), 0],
    ]);
  });

  it('bad searches are 400s naming the field', async () => {
    for (const [body, field] of [
      [{}, 'query'],
      [{ query: '' }, 'query'],
      [{ query: '!!! ???' }, 'query'],
      [{ query: 'x'.repeat(501) }, 'query'],
      [{ query: 'a', limit: 0 }, 'limit'],
      [{ query: 'a', limit: 101 }, 'limit'],
      [{ query: 'a', site: 'http://x/' }, 'site'],
      [{ query: 'a', jobs: 'one' }, 'jobs'],
      [{ query: 'a', jobs: Array(101).fill('j') }, 'jobs'],
    ] as const) {
      const r = await http().post('/v1/search').set(fleet).send(body);
      expect([body, r.status, r.body.error?.code]).toEqual([body, 400, 'invalid_request']);
      expect(r.body.error.message).toContain(field);
    }
    expect((await http().post('/v1/search').send({ query: 'a' })).status).toBe(401);
  });
});

const migrationsBefore = (name: string) =>
  Object.fromEntries(Object.entries(migrations).filter(([n]) => n < name));

/** A database migrated to before `name`, holding one done job of one page (about a lighthouse). */
async function oldDatabase(db: Kysely<any>, name: string): Promise<void> {
  await migrate(db, migrationsBefore(name));
  const result = JSON.stringify({
    url: 'https://docs.example.com/old',
    final_url: 'https://docs.example.com/old',
    title: 'An old page',
    content: 'Written before: the lighthouse keeper logs every ship.',
  });
  await sql`INSERT INTO batch_job (id, caller, caller_class, idem_key, status, targets_total, created_at, lease)
    VALUES ('old-job', 'fleet-caller', 'fleet', 'k', 'done', 1, 1800000000, 1800000000)`.execute(db);
  await sql`INSERT INTO batch_target (job_id, idx, url, options, status, result, updated_at, host)
    VALUES ('old-job', 0, 'https://docs.example.com/old', '{}', 'done', ${result}, 1800000000, 'docs.example.com')`.execute(
    db,
  );
}

describe('search on a SQLite database from before the index', () => {
  it('its stored results are indexed by the migration', async () => {
    const file = tmpDbPath();
    const opened = openSqlite(file);
    await oldDatabase(opened.db, '0012');
    await opened.db.destroy();
    const { app } = await createTestApp({ SIFT_DB: file });
    try {
      const r = await request(app.getHttpServer())
        .post('/v1/search')
        .set(fleet)
        .send({ query: 'lighthouse ships' });
      expect(r.body.hits).toEqual([
        expect.objectContaining({
          url: 'https://docs.example.com/old',
          title: 'An old page',
          job_id: 'old-job',
          idx: 0,
        }),
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('search on a PostgreSQL database whose index words were the database’s', () => {
  it('its documents are given their words after start, and found as new ones are', async () => {
    const pg = await createPgDatabase();
    const opened = openPostgres(pg.url);
    try {
      await oldDatabase(opened.db, '0012');
      // Indexed by the database itself, as before: 'the' is a stop word there, and is not kept.
      await migrate(opened.db, migrationsBefore('0013'));
      const before = await sql<{ v: string }>`SELECT tsv::text AS v FROM search_doc`.execute(opened.db);
      expect(before.rows[0].v).not.toContain("'the'");
    } finally {
      await opened.db.destroy();
    }
    const { app } = await createTestApp({ SIFT_DATABASE_URL: pg.url });
    try {
      const hits = async (query: string) =>
        (await request(app.getHttpServer()).post('/v1/search').set(fleet).send({ query })).body.hits as {
          url: string;
        }[];
      // Its words now are sift's, stop words kept: a query meets them as it meets a new page's.
      await waitUntil(
        async () => ((await hits('the lighthouse ships')).length === 1 ? true : undefined),
        'the old page, found by its words',
      );
      expect(await hits('the lighthouse ships')).toEqual([
        expect.objectContaining({ url: 'https://docs.example.com/old', job_id: 'old-job', idx: 0 }),
      ]);
      const left = await sql<{ n: number }>`SELECT count(*) AS n FROM search_doc WHERE tsv IS NULL`.execute(
        app.get(Dcache).kysely,
      );
      expect(Number(left.rows[0].n)).toBe(0);
    } finally {
      await app.close();
      await pg.drop();
    }
  });
});
