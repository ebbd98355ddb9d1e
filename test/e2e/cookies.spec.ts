import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, fleet, tableResolver, waitForJob } from '../support/app';
import { LogSink } from '../support/log-sink';
import { Fixture, articleHtml, html, send, type Handler } from '../support/fixture';

/** An article that shows the Cookie header it was asked with. */
const echo: Handler = (req, res) =>
  send(200, 'text/html', articleHtml('Echo', 4, `cookie [${req.headers.cookie ?? 'none'}]`))(req, res);

const SECRET = 'secret-value-4f2a';

describe('cookies: sent only where their scope says, in the cache key, never logged', () => {
  let app: INestApplication;
  let site: Fixture;
  let other: Fixture;
  let logs: LogSink;
  /** Requests that reached the other host with a Cookie header. */
  let otherCookies = 0;
  const http = () => request(app.getHttpServer());
  const fetchIt = (body: object) =>
    http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ format: 'text', max_age_s: 0, ...body });

  beforeAll(async () => {
    other = await new Fixture({
      '/landing': (req, res) => {
        if (req.headers.cookie) otherCookies++;
        echo(req, res);
      },
    }).start('127.0.0.3');
    site = await new Fixture({
      '/echo': echo,
      '/private/echo': echo,
      // Off to another host: the cookies stay behind.
      '/away': send(302, 'text/html', '', { location: `http://127.0.0.3:${other.port}/landing` }),
      // Its script writes the cookies the browser holds for it into the page.
      '/script': send(
        200,
        'text/html',
        html(
          `<article id="a"><h1>Script</h1><p>${'Words of the page. '.repeat(30)}</p></article>` +
            `<script>document.getElementById('a').insertAdjacentHTML('beforeend', '<p>browser cookie [' + document.cookie + ']</p>')</script>`,
          'Script',
        ),
      ),
    }).start('127.0.0.2');
    logs = new LogSink();
    ({ app } = await createTestApp(
      { SIFT_FLEET_ALLOW: '127.0.0.0/8', SIFT_LOG_LEVEL: 'debug' },
      { logger: logs, resolver: tableResolver({ 'site.test': ['127.0.0.2'] }) },
    ));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await site?.stop();
    await other?.stop();
  });

  it('a Cookie header value or a list; a path or a domain scopes each', async () => {
    const header = await fetchIt({ url: site.url('/echo'), cookies: `session=${SECRET}; theme=dark` });
    expect(header.status).toBe(200);
    expect(header.body.content).toContain(`cookie [session=${SECRET}; theme=dark]`);
    const list = await fetchIt({
      url: site.url('/echo'),
      cookies: [
        { name: 'a', value: '1' },
        { name: 'b', value: '2', path: '/private' },
      ],
    });
    expect(list.body.content).toContain('cookie [a=1]');
    const deeper = await fetchIt({
      url: site.url('/private/echo'),
      cookies: [{ name: 'b', value: '2', path: '/private' }],
    });
    expect(deeper.body.content).toContain('cookie [b=2]');
    // A domain the URL's host is under is taken; any other is 400 naming the cookie.
    const named = `http://site.test:${site.port}/echo`;
    const under = await fetchIt({ url: named, cookies: [{ name: 'd', value: '4', domain: 'site.test' }] });
    expect([under.status, under.body.error]).toEqual([200, undefined]);
    expect(under.body.content).toContain('cookie [d=4]');
    const elsewhere = await fetchIt({
      url: named,
      cookies: [{ name: 'd', value: '4', domain: 'other.test' }],
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.message).toContain('cookies.0 cannot be set for');
  });

  it('a redirect to another host sends it none of them', async () => {
    const before = other.hitCount('/landing');
    const r = await fetchIt({ url: site.url('/away'), cookies: `session=${SECRET}` });
    expect(r.status).toBe(200);
    expect(r.body.final_url).toBe(`http://127.0.0.3:${other.port}/landing`);
    expect(r.body.content).toContain('cookie [none]');
    expect(other.hitCount('/landing')).toBe(before + 1);
    expect(otherCookies).toBe(0);
  });

  it('they are part of the cache key: other cookies are another page', async () => {
    const url = site.url('/echo');
    const a = await fetchIt({ url, cookies: 'who=alice', max_age_s: 3600 });
    const b = await fetchIt({ url, cookies: 'who=bob', max_age_s: 3600 });
    const again = await fetchIt({ url, cookies: 'who=alice', max_age_s: 3600 });
    expect([a.body.content.includes('who=alice'), b.body.content.includes('who=bob')]).toEqual([true, true]);
    expect([b.body.cached, again.body.cached, again.body.content]).toEqual([false, true, a.body.content]);
    const none = await fetchIt({ url, max_age_s: 3600 });
    expect(none.body.content).toContain('cookie [none]');
  });

  it("a render's browser holds them for the page's site", async () => {
    const r = await fetchIt({ url: site.url('/script'), render: 'always', cookies: `session=${SECRET}` });
    expect(r.status).toBe(200);
    expect(r.body.rendered).toBe(true);
    expect(r.body.content).toContain(`browser cookie [session=${SECRET}]`);
  }, 60_000);

  it('batch targets and crawls carry them; bad ones are 400; no log line holds a value', async () => {
    const sub = await http()
      .post('/v1/batch')
      .set(fleet)
      .send({
        targets: [{ url: site.url('/echo') }],
        options: { cookies: `batch=${SECRET}`, format: 'text' },
      });
    expect(sub.status).toBe(202);
    await waitForJob(app, sub.body.id);
    const res = await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet);
    expect(res.body.results[0].result.content).toContain(`cookie [batch=${SECRET}]`);
    const crawl = await http()
      .post('/v1/crawl')
      .set(fleet)
      .send({ url: site.url('/echo'), limit: 1, options: { cookies: `crawl=${SECRET}`, format: 'text' } });
    expect(crawl.status).toBe(202);
    await waitForJob(app, crawl.body.id);
    const pages = await http().get(`/v1/batch/${crawl.body.id}/results`).set(fleet);
    expect(pages.body.results[0].result.content).toContain(`cookie [crawl=${SECRET}]`);
    for (const cookies of [
      5,
      [{ name: 'x' }],
      [{ name: 'x', value: 'y', secure: true }],
      'x'.repeat(9000),
      [{ name: 'a;b', value: '1' }],
    ]) {
      const bad = await fetchIt({ url: site.url('/echo'), cookies });
      expect([JSON.stringify(cookies).slice(0, 40), bad.status]).toEqual([
        JSON.stringify(cookies).slice(0, 40),
        400,
      ]);
      expect(bad.body.error.message).toContain('cookies');
    }
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(logs.lines.filter((l) => l.includes(SECRET))).toEqual([]);
  }, 60_000);
});
