import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestApp, fleet, FLEET_TOKEN, restricted, waitForJob } from '../support/app';
import { call } from '../support/mcp-tools';
import { Fixture, send } from '../support/fixture';
import { LOGIN_ACTIONS as LOGIN, SessionSite } from '../support/session-site';

const MORE = [
  { type: 'click', selector: '#accept' },
  { type: 'click', selector: '#more' },
  { type: 'click', selector: '#more' },
  { type: 'click', selector: '#more' },
  { type: 'scrape' },
];

describe('actions: steps on a rendered page, within its deadline and the caller policy', () => {
  let app: INestApplication;
  let site: SessionSite;
  let secret: Fixture;
  const http = () => request(app.getHttpServer());
  const fetchIt = (body: object, who = fleet) =>
    http()
      .post('/v1/fetch')
      .set(who)
      .send({ format: 'text', max_age_s: 0, ...body });

  beforeAll(async () => {
    secret = await new Fixture({ '/secret': send(200, 'text/plain', 'the secret') }).start('127.0.0.5');
    site = await new SessionSite(() => secret.url('/secret')).start('127.0.0.2');
    // Fleet callers reach the site's address, not the secret's.
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.2/32', SIFT_ALLOW_PAGE_SCRIPTS: '1' }));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await site?.stop();
    await secret?.stop();
  });

  it('past a cookie banner, "load more" clicked three times, then scraped', async () => {
    const before = site.fixture.hitCount('/feed/more');
    const r = await fetchIt({ url: site.url('/feed'), actions: MORE });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.rendered).toBe(true);
    expect(site.fixture.hitCount('/feed/more') - before).toBe(3);
    for (const k of [1, 8]) expect(r.body.content).toContain(`Item ${k} `);
    expect(r.body.content).not.toContain('Item 9 ');
    expect(r.body.actions.scrapes).toHaveLength(1);
    expect(r.body.actions.scrapes[0].url).toBe(site.url('/feed'));
    expect(r.body.actions.scrapes[0].html).toContain('Item 8 ');
    expect(r.body.actions.scrapes[0].html).not.toContain('id="more"');
    expect([r.body.actions.screenshots, r.body.actions.javascriptReturns]).toEqual([[], []]);
    // Without them, the page is as served.
    const plain = await fetchIt({ url: site.url('/feed'), render: 'always' });
    expect([plain.body.content.includes('Item 3 '), plain.body.actions]).toEqual([false, undefined]);
  }, 60_000);

  it('a scripted login: write, click, press, and the page behind it', async () => {
    const r = await fetchIt({ url: site.url('/login'), actions: LOGIN });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.final_url).toBe(site.url('/account'));
    expect(r.body.content).toContain('Account of ada');
  }, 60_000);

  it('a step after a click that navigates is taken on the page it reached', async () => {
    const r = await fetchIt({
      url: site.url('/feed'),
      actions: [
        { type: 'click', selector: '#accept' },
        { type: 'click', selector: '#next' },
        { type: 'scroll' },
        { type: 'scrape' },
      ],
    });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.actions.scrapes[0].url).toBe(site.url('/tall'));
    expect(r.body.content).toContain('The tail that scrolling loads.');
  }, 60_000);

  it('a screenshot before and after a scroll; the scroll loads the tail', async () => {
    const r = await fetchIt({
      url: site.url('/tall'),
      actions: [
        { type: 'screenshot' },
        { type: 'scroll', direction: 'down' },
        { type: 'screenshot' },
        { type: 'screenshot', fullPage: true },
      ],
    });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    const shots = r.body.actions.screenshots as { width: number; height: number; data: string }[];
    expect(shots.map((s) => [s.width, s.height])).toEqual([
      [1280, 800],
      [1280, 800],
      [1280, expect.any(Number)],
    ]);
    expect(shots[2].height).toBeGreaterThan(6000);
    expect(shots[0].data).not.toBe(shots[1].data);
    expect(Buffer.from(shots[0].data, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(r.body.content).toContain('The tail that scrolling loads.');
    // The results count in the envelope's bytes and the output cap.
    expect(r.body.bytes).toBeGreaterThan(shots.reduce((n, s) => n + s.data.length, 0));
    const capped = await fetchIt({
      url: site.url('/tall'),
      max_bytes: shots[0].data.length + 10,
      actions: [{ type: 'screenshot' }, { type: 'screenshot' }],
    });
    expect([capped.body.actions.screenshots.length, capped.body.truncated]).toEqual([1, true]);
  }, 60_000);

  it('a wait for a selector that never comes ends at the deadline with timeout', async () => {
    const started = Date.now();
    const r = await fetchIt({
      url: site.url('/feed'),
      timeout_ms: 3000,
      actions: [
        { type: 'click', selector: '#accept' },
        { type: 'wait', selector: '#never' },
      ],
    });
    expect(r.status).toBe(504);
    expect(r.body.error.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(30_000);
    // A click on a button the banner covers waits for it the same way.
    const covered = await fetchIt({
      url: site.url('/feed'),
      timeout_ms: 3000,
      actions: [{ type: 'click', selector: '#more' }],
    });
    expect([covered.status, covered.body.error.code]).toEqual([504, 'timeout']);
  }, 60_000);

  it('what a click reaches is held to the caller policy: the secret server sees nothing', async () => {
    const before = secret.hitCount('/secret');
    const r = await fetchIt({
      url: site.url('/leak'),
      actions: [
        { type: 'click', selector: '#leak' },
        { type: 'wait', selector: '#outcome' },
      ],
    });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.content).toMatch(/Outcome: (refused|answered 403)/);
    expect(r.body.render.blocked).toBeGreaterThanOrEqual(1);
    const away = await fetchIt({ url: site.url('/leak'), actions: [{ type: 'click', selector: '#away' }] });
    expect([away.status, away.body.error?.code]).toEqual([403, 'blocked_address']);
    expect(secret.hitCount('/secret')).toBe(before);
  }, 60_000);

  it('a click whose handler runs long still has what it asked for waited on', async () => {
    const r = await fetchIt({ url: site.url('/leak'), actions: [{ type: 'click', selector: '#slow' }] });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.content).toContain('Item 17 ');
  }, 60_000);

  it('executeJavascript: its returns, its errors; refused to restricted callers', async () => {
    const r = await fetchIt({
      url: site.url('/feed'),
      actions: [
        { type: 'executeJavascript', script: 'return document.title' },
        { type: 'executeJavascript', script: 'return { items: document.querySelectorAll("li").length }' },
        { type: 'executeJavascript', script: 'throw new Error("no luck")' },
        { type: 'executeJavascript', script: 'document.getElementById("accept").click()' },
        { type: 'executeJavascript', script: 'return () => 1' },
      ],
    });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    expect(r.body.actions.javascriptReturns).toEqual([
      { type: 'string', value: 'Feed' },
      { type: 'object', value: { items: 2 } },
      { type: 'error', value: expect.stringContaining('no luck') },
      { type: 'undefined', value: null },
      { type: 'function', value: null },
    ]);
    const refused = await fetchIt(
      { url: 'http://93.184.215.14/', actions: [{ type: 'executeJavascript', script: 'return 1' }] },
      restricted,
    );
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    expect(refused.body.error.message).toContain('actions.0');
  }, 60_000);

  it('bad actions are 400 naming the action and field, before anything is fetched', async () => {
    const hits = site.fixture.hitCount('/feed');
    const cases: [unknown, string][] = [
      [[{ type: 'jump' }], 'actions.0.type must be one of'],
      [[{ type: 'wait' }], 'actions.0 (wait) takes one of milliseconds or selector'],
      [[{ type: 'wait', milliseconds: 5, selector: 'p' }], 'takes one of'],
      [[{ type: 'click' }], 'actions.0.selector is required by click'],
      [
        [{ type: 'scrape' }, { type: 'click', selector: 'p', force: true }],
        'actions.1.force is not a field of click',
      ],
      [[{ type: 'scroll', direction: 'left' }], 'actions.0.direction must be "up" or "down"'],
      [Array.from({ length: 51 }, () => ({ type: 'scrape' })), 'at most 50 actions'],
      ['click', 'at most 50 actions'],
    ];
    for (const [actions, message] of cases) {
      const r = await fetchIt({ url: site.url('/feed'), actions });
      expect([r.status, r.body.error.code]).toEqual([400, 'invalid_request']);
      expect(r.body.error.message).toContain(message);
    }
    const never = await fetchIt({ url: site.url('/feed'), render: 'never', actions: [{ type: 'scrape' }] });
    expect([never.status, never.body.error.message]).toEqual([
      400,
      expect.stringContaining('render "never"'),
    ]);
    const key = await fetchIt({ url: site.url('/feed'), actions: [{ type: 'press', key: 'NoSuchKey' }] });
    expect([key.status, key.body.error.message]).toEqual([400, expect.stringContaining('not a key')]);
    expect(site.fixture.hitCount('/feed')).toBe(hits + 1);
  }, 60_000);

  it('a batch and a crawl take them for each page, kept with the job', async () => {
    const job = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [{ url: site.url('/feed') }],
        options: { format: 'text', max_age_s: 0, actions: MORE },
      });
    expect(job.status).toBe(202);
    await waitForJob(app, job.body.id);
    const results = await http().get(`/v1/batch/${job.body.id}/results`).set(fleet);
    const first = results.body.results[0].result;
    expect(first.content).toContain('Item 8 ');
    expect(first.actions.scrapes).toHaveLength(1);
    const crawl = await http()
      .post('/v1/crawl')
      .set(fleet)
      .send({ url: site.url('/login'), limit: 1, options: { format: 'text', max_age_s: 0, actions: LOGIN } });
    expect(crawl.status).toBe(202);
    await waitForJob(app, crawl.body.id);
    const page = await http().get(`/v1/batch/${crawl.body.id}/results`).set(fleet);
    expect(page.body.results[0].result.content).toContain('Account of ada');
  }, 60_000);

  it('the MCP fetch tool takes them: the content is the page after the last', async () => {
    await app.listen(0, '127.0.0.1');
    const port = ((app.getHttpServer() as Server).address() as AddressInfo).port;
    const c = new Client({ name: 'actions-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${FLEET_TOKEN}` } },
      }),
    );
    try {
      const r = await call(c, 'fetch', { url: site.url('/feed'), format: 'text', actions: MORE });
      expect(r.isError).toBe(false);
      expect(r.body.content).toContain('Item 8 ');
      expect(r.body.actions.scrapes).toHaveLength(1);
      const bad = await call(c, 'fetch', { url: site.url('/feed'), actions: [{ type: 'click' }] });
      expect([bad.isError, bad.body.message]).toEqual([true, expect.stringContaining('actions.0.selector')]);
    } finally {
      await c.close();
    }
  }, 60_000);

  it("Firecrawl's /v2/scrape maps them, and names what it does not take", async () => {
    const r = await http()
      .post('/v2/scrape')
      .set(fleet)
      .send({
        url: site.url('/feed'),
        maxAge: 0,
        actions: [...MORE, { type: 'screenshot' }, { type: 'executeJavascript', script: 'return 2 + 2' }],
      });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    const d = r.body.data;
    expect(d.markdown).toContain('Item 8 ');
    expect(d.actions.screenshots[0]).toMatch(/^data:image\/png;base64,/);
    expect(d.actions.scrapes[0].html).toContain('Item 8 ');
    expect(d.actions.javascriptReturns).toEqual([{ type: 'number', value: 4 }]);
    expect(d.actions.pdfs).toEqual([]);
    for (const [action, field] of [
      [{ type: 'pdf' }, 'actions.0: pdf'],
      [{ type: 'screenshot', quality: 80 }, 'actions.0.quality'],
    ] as const) {
      const bad = await http()
        .post('/v2/scrape')
        .set(fleet)
        .send({ url: site.url('/feed'), actions: [action] });
      expect([bad.status, bad.body.success]).toEqual([400, false]);
      expect(bad.body.error).toContain(field);
    }
  }, 60_000);
});

describe('actions: page scripts are off unless the operator turns them on', () => {
  it('executeJavascript is 403 naming the setting, for a fleet caller too', async () => {
    const { app } = await createTestApp({});
    try {
      const r = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: 'http://127.0.0.1:9/', actions: [{ type: 'executeJavascript', script: 'return 1' }] });
      expect([r.status, r.body.error.code]).toEqual([403, 'forbidden']);
      expect(r.body.error.hint).toContain('SIFT_ALLOW_PAGE_SCRIPTS=1');
      const batch = await request(app.getHttpServer())
        .post('/v1/batch')
        .set(fleet)
        .send({
          targets: [{ url: 'http://127.0.0.1:9/' }],
          options: { actions: [{ type: 'executeJavascript', script: 'return 1' }] },
        });
      expect([batch.status, batch.body.error.message]).toEqual([
        403,
        expect.stringContaining('targets.0: actions.0'),
      ]);
    } finally {
      await app.close();
    }
  });
});
