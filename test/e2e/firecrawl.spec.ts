import { execFile } from 'node:child_process';
import * as path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { FLEET_TOKEN, RESTRICTED_TOKEN, waitUntil } from '../support/app';
import type { Fixture } from '../support/fixture';
import { PAGE_A, startFirecrawlSite } from '../support/firecrawl-site';
import { node24 } from '../support/node24';

/** Firecrawl's official SDK (Node 24, a child process) against sift's /v2, sift in this process. */
describe('Firecrawl-compatible API (/v2) through the official SDK', () => {
  let app: INestApplication;
  let fixture: Fixture;
  let base: string;

  beforeAll(async () => {
    ({ app, fixture, base } = await startFirecrawlSite());
  });

  afterAll(async () => {
    await app?.close();
    await fixture?.stop();
  });

  /** Runs the SDK script under Node 24 and returns what it printed. */
  function runSdk(): Promise<Record<string, { ok?: any; error?: { message: string; status?: number } }>> {
    const script = path.join(__dirname, '../support/firecrawl-client.js');
    return new Promise((resolve, reject) =>
      execFile(
        node24(),
        [script, `${base}/firecrawl`, FLEET_TOKEN, `http://127.0.0.1:${fixture.port}`],
        { cwd: path.join(__dirname, '../..'), timeout: 90_000 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
      ),
    );
  }

  it('scrape, batch scrape, crawl, map and cancel answer in Firecrawl shapes; what sift cannot do is 400', async () => {
    const out = await runSdk();
    const site = `http://127.0.0.1:${fixture.port}`;

    for (const call of ['scrape', 'batch', 'crawl', 'map', 'startCrawl', 'cancel'])
      expect({ call, error: out[call]?.error }).toEqual({ call, error: undefined });
    const doc = out.scrape.ok;
    expect(doc.markdown).toContain('Paragraph 0 of the article about apples');
    expect(doc.html).toContain('<p>Paragraph 0 of the article about apples');
    expect(doc.links).toEqual(expect.arrayContaining([`${site}/b`]));
    expect(doc.metadata).toMatchObject({
      title: 'Page A',
      sourceURL: `${site}/a`,
      url: `${site}/a`,
      statusCode: 200,
    });

    const batch = out.batch.ok;
    expect(batch).toMatchObject({ status: 'completed', total: 2, completed: 2, next: null });
    expect(batch.data.map((d: any) => d.metadata.sourceURL).sort()).toEqual([`${site}/a`, `${site}/b`]);
    expect(batch.data.every((d: any) => typeof d.markdown === 'string' && d.html === undefined)).toBe(true);

    const crawl = out.crawl.ok;
    expect(crawl).toMatchObject({ status: 'completed', total: 3, completed: 3 });
    expect(crawl.data.map((d: any) => d.metadata.sourceURL).sort()).toEqual([
      `${site}/`,
      `${site}/a`,
      `${site}/b`,
    ]);

    expect(out.map.ok.links.map((l: any) => l.url).sort()).toEqual([`${site}/`, `${site}/a`, `${site}/b`]);

    // Errors: the batch's page whose connection was refused, none for the crawl whose pages all loaded.
    expect(out.batchErrors.ok).toEqual({
      errors: [
        { id: '1', url: 'http://127.0.0.1:1/refused', code: 'connect_error', error: expect.any(String) },
      ],
      robotsBlocked: [],
    });
    expect(out.crawlErrors.ok).toEqual({ errors: [], robotsBlocked: [] });
    // A status read of one page of documents, then the rest by following next (the SDK's auto-paginate).
    expect(out.crawlStatus.ok).toMatchObject({ status: 'completed', total: 3, completed: 3 });
    expect(out.crawlStatus.ok.data.map((d: any) => d.metadata.sourceURL).sort()).toEqual(
      crawl.data.map((d: any) => d.metadata.sourceURL).sort(),
    );

    // A crawl from a sub-path keeps to it and below, as Firecrawl's; crawlEntireDomain lifts that.
    const urls = (crawl: any) => crawl.data.map((d: any) => d.metadata.sourceURL).sort();
    expect(out.subPath.error).toBeUndefined();
    expect(urls(out.subPath.ok)).toEqual([
      `${site}/docs/guide/`,
      `${site}/docs/guide/one`,
      `${site}/docs/guide/two/`,
    ]);
    expect(out.entireDomain.error).toBeUndefined();
    expect(urls(out.entireDomain.ok)).toEqual(
      expect.arrayContaining([`${site}/`, `${site}/docs/`, `${site}/docs/api/`, `${site}/docs/guide/two/`]),
    );
    expect(out.map.ok.links.find((l: any) => l.url === `${site}/a`).title).toBe('A');

    expect(out.startCrawl.ok.url).toBe(`${base}/firecrawl/v2/crawl/${out.startCrawl.ok.id}`);
    expect(out.cancel.ok).toBe(true);
    // Active crawls: the slow crawl while it runs, and not once it is cancelled.
    expect(out.active.ok.crawls).toEqual([
      { id: out.startCrawl.ok.id, teamId: expect.any(String), url: `${site}/slow/0`, options: null },
    ]);
    expect(out.activeAfter.ok).toEqual({ success: true, crawls: [] });
    // A batch scrape of slow pages, cancelled while they load: the SDK's true, and the batch stays cancelled.
    expect(out.startBatch.error).toBeUndefined();
    expect(out.cancelBatch).toEqual({ ok: true });
    expect(out.batchAfterCancel.ok).toMatchObject({ status: 'cancelled', total: 3 });

    // The whole page's links, each once, absolute, in document order: navigation and footer too.
    expect(out.links.ok.links).toEqual([
      `${site}/`,
      `${site}/docs/`,
      `${site}/a`,
      'https://other.example/x?y=1',
      `${site}/about#team`,
    ]);

    // The team routes, as a self-hosted Firecrawl without billing answers them.
    expect(out.concurrency.ok).toEqual({ concurrency: 0, maxConcurrency: 32 });
    expect(out.creditUsage.ok).toEqual({
      remainingCredits: 99_999_999,
      planCredits: 99_999_999,
      billingPeriodStart: null,
      billingPeriodEnd: null,
    });
    expect(out.tokenUsage.ok).toMatchObject({ remainingTokens: 99_999_999 });
    expect(out.queueStatus.ok).toEqual({
      success: true,
      jobsInQueue: 0,
      activeJobsInQueue: 0,
      waitingJobsInQueue: 0,
      maxConcurrency: 32,
      mostRecentSuccess: null,
    });
    expect(out.creditHistory.ok).toEqual({ success: true, periods: [] });
    expect(out.tokenHistory.ok).toEqual({ success: true, periods: [] });
    // Routes sift does not serve: 400 naming the route and why, never 404 or 405.
    for (const [call, route] of [
      ['search', 'POST /firecrawl/v2/search'],
      ['extract', 'POST /firecrawl/v2/extract'],
      ['agent', 'POST /firecrawl/v2/agent'],
      ['paramsPreview', 'POST /firecrawl/v2/crawl/params-preview'],
    ]) {
      expect({ call, status: out[call].error?.status }).toEqual({ call, status: 400 });
      expect(out[call].error!.message).toContain(`${route} is not supported by this server`);
    }

    // changeTracking: Firecrawl's shape; the first scrape is new, the next changed with its diff.
    const [t1, t2] = (out.tracked as unknown as { ok: any }[]).map((t) => t.ok);
    expect(t1.changeTracking).toEqual({
      previousScrapeAt: null,
      changeStatus: 'new',
      visibility: 'visible',
      diff: { text: '', json: { files: [] } },
    });
    expect(t2.changeTracking).toMatchObject({ changeStatus: 'changed', visibility: 'visible' });
    expect(Date.parse(t2.changeTracking.previousScrapeAt)).toBeGreaterThan(0);
    expect(t2.changeTracking.diff.text).toContain('-This page was read 1 times by now');
    expect(t2.changeTracking.diff.text).toContain('+This page was read 2 times by now');
    const [file] = t2.changeTracking.diff.json.files;
    expect([file.from, file.to]).toEqual(['previous', 'current']);
    expect(file.chunks[0].content).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@/);
    expect(file.chunks[0].changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'del', content: expect.stringContaining('read 1 times') }),
        expect.objectContaining({ type: 'add', content: expect.stringContaining('read 2 times') }),
      ]),
    );
    // Without git-diff, no diff; a mode that needs a model is 400 naming it.
    expect(out.trackedPlain.ok.changeTracking).toEqual({
      previousScrapeAt: expect.any(String),
      changeStatus: 'changed',
      visibility: 'visible',
    });
    expect(out.trackedJson.error).toMatchObject({ status: 400 });
    expect(out.trackedJson.error!.message).toContain('changeTracking');
    expect(out.json.error).toMatchObject({ status: 400 });
    expect(out.json.error!.message).toContain('formats: json');
    // rawHtml: the page as served; onlyMainContent: false, the whole page.
    expect(out.rawHtml.error).toBeUndefined();
    expect(out.rawHtml.ok.rawHtml).toBe(PAGE_A);
    expect(out.rawHtml.ok.markdown).toBe(doc.markdown);
    expect(out.mainContent.ok.markdown).not.toContain('Docs again');
    expect(out.wholePage.ok.markdown).toContain('Linked words.');
    expect(out.wholePage.ok.markdown).toMatch(/Home[^]*Docs again[^]*About/);
    // Path patterns are regular expressions searched for in the path; one needing a backtracker is 400.
    expect(out.regex.error).toBeUndefined();
    expect(urls(out.regex.ok)).toEqual([`${site}/docs/`, `${site}/docs/guide/`, `${site}/docs/guide/one`]);
    expect(out.lookahead.error).toMatchObject({ status: 400 });
    expect(out.lookahead.error!.message).toContain('includePaths.0 path pattern "^/docs/(?!api)"');
  }, 90_000);

  it("a status read pages its documents with next, a full URL; scrape options map onto sift's; what sift cannot do is 400 naming the field", async () => {
    const auth = { Authorization: `Bearer ${FLEET_TOKEN}`, 'Content-Type': 'application/json' };
    const site = `http://127.0.0.1:${fixture.port}`;
    const start = await fetch(`${base}/v2/batch/scrape`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ urls: [`${site}/a`, `${site}/b`], formats: ['links'] }),
    }).then((r) => r.json());
    expect(start.error).toBeUndefined();
    expect(start).toMatchObject({ success: true, url: `${base}/v2/batch/scrape/${start.id}` });
    // Another caller reaches none of it through the job routes; a batch is no crawl.
    const other = { Authorization: `Bearer ${RESTRICTED_TOKEN}` };
    for (const [method, path, headers] of [
      ['GET', `/v2/batch/scrape/${start.id}/errors`, other],
      ['DELETE', `/v2/batch/scrape/${start.id}`, other],
      ['GET', `/v2/crawl/${start.id}/errors`, auth],
      ['DELETE', `/v2/crawl/${start.id}`, auth],
    ] as const) {
      const r = await fetch(`${base}${path}`, { method, headers });
      expect([method, path, r.status, (await r.json()).success]).toEqual([method, path, 404, false]);
    }
    // A path of Firecrawl's API that no route serves, or a method none takes: 400 naming it.
    for (const [method, path] of [
      ['GET', '/v2/scrape'],
      ['PUT', '/firecrawl/v2/crawl/active'],
      ['POST', '/firecrawl/v2/browser'],
      ['GET', '/firecrawl/v9/anything'],
    ] as const) {
      const r = await fetch(`${base}${path}`, { method, headers: auth });
      const body = await r.json();
      expect([method, path, r.status, body.success]).toEqual([method, path, 400, false]);
      expect(body.error).toContain(`${method} ${path} is not supported by this server`);
    }
    const ownErrors = await fetch(`${base}/v2/batch/scrape/${start.id}/errors`, { headers: auth });
    expect(ownErrors.status).toBe(200);
    const othersActive = await fetch(`${base}/v2/crawl/active`, { headers: other }).then((r) => r.json());
    expect(othersActive).toEqual({ success: true, crawls: [] });
    const first = await waitUntil<any>(
      async () => {
        const page = await fetch(`${start.url}?limit=1`, { headers: auth }).then((r) => r.json());
        return page.status === 'scraping' ? undefined : page;
      },
      'the batch scrape to end',
      20_000,
      100,
    );
    expect(first).toMatchObject({ success: true, status: 'completed', total: 2, completed: 2 });
    expect(first.data).toHaveLength(1);
    expect(first.data[0].links).toEqual(expect.any(Array));
    expect(first.data[0].markdown).toBeUndefined();
    const second = await fetch(first.next, { headers: auth }).then((r) => r.json());
    expect(second.data).toHaveLength(1);
    expect(second.next).toBeNull();
    expect([first.data[0], second.data[0]].map((d: any) => d.metadata.sourceURL)).toEqual([
      `${site}/a`,
      `${site}/b`,
    ]);

    const missing = await fetch(`${base}/v2/crawl/${start.id}`, { headers: auth });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      success: false,
      error: expect.any(String),
      code: 'not_found',
    });
    const scrape = (body: object) =>
      fetch(`${base}/v2/scrape`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    const only = await scrape({
      url: `${site}/a`,
      includeTags: ['h1'],
      excludeTags: ['nav'],
      maxAge: 60_000,
      timeout: 5000,
    });
    expect(only.status).toBe(200);
    const onlyDoc = (await only.json()).data;
    expect(onlyDoc.markdown).toContain('Page A');
    expect(onlyDoc.markdown).not.toContain('Paragraph 0');
    for (const [body, field] of [
      [{ onlyMainContent: 'false' }, 'onlyMainContent must be a boolean'],
      [{ actions: [{ type: 'pdf' }] }, 'actions.0: pdf'],
      [{ location: { country: 'US' } }, 'location'],
      [{ formats: ['summary'] }, 'formats: summary'],
      // sift's own rule, named as the caller named the field.
      [{ timeout: 999_999 }, 'timeout must not be greater than 120000'],
    ] as const) {
      const r = await scrape({ url: `${site}/a`, ...body });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ success: false, error: expect.stringContaining(field) });
    }
    const crawl = await fetch(`${base}/v2/crawl`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: site, maxDiscoveryDepth: -1, scrapeOptions: { waitFor: -5 } }),
    });
    expect(crawl.status).toBe(400);
    expect((await crawl.json()).error).toMatch(
      /maxDiscoveryDepth.*scrapeOptions\.waitFor|scrapeOptions\.waitFor.*maxDiscoveryDepth/,
    );
    // headers go with the fetch; a screenshot is a PNG data URL beside the markdown, from one render.
    const echoed = await scrape({ url: `${site}/echo`, headers: { 'X-Fruit': 'quinces' } });
    expect((await echoed.json()).data.markdown).toContain('quinces');
    const shot = await scrape({ url: `${site}/b`, formats: ['markdown', 'screenshot'] });
    expect(shot.status).toBe(200);
    const shotDoc = (await shot.json()).data;
    expect(shotDoc.markdown).toContain('bananas');
    expect(shotDoc.screenshot).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from(shotDoc.screenshot.split(',')[1], 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // fullPage: the whole page, v2's object and v1's name for it.
    const heightOf = (dataUrl: string) => Buffer.from(dataUrl.split(',')[1], 'base64').readUInt32BE(20);
    expect(heightOf(shotDoc.screenshot)).toBe(800);
    for (const [path, formats] of [
      ['/v2/scrape', [{ type: 'screenshot', fullPage: true }]],
      ['/firecrawl/v1/scrape', ['screenshot@fullPage']],
    ] as const) {
      const r = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ url: `${site}/tall`, formats }),
      });
      const whole = await r.json();
      expect([path, r.status, whole.success]).toEqual([path, 200, true]);
      expect(heightOf(whole.data.screenshot)).toBeGreaterThanOrEqual(3000);
    }
    const unauth = await fetch(`${base}/v2/scrape`, { method: 'POST', body: '{}' });
    expect(unauth.status).toBe(401);
    expect(await unauth.json()).toMatchObject({ success: false });
  });
});
