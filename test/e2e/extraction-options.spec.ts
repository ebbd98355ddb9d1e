import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createTestApp, fleet } from '../support/app';
import { Fixture, send } from '../support/fixture';

describe('extraction options through the app', () => {
  let app: INestApplication;
  let fx: Fixture;
  const http = () => request(app.getHttpServer());
  const page = `<!doctype html><html lang="en-GB"><head><title>Harbour news</title>
    <meta property="og:site_name" content="Example Harbour Post">
    <meta property="og:image" content="/img/lead.jpg">
    <link rel="canonical" href="https://news.example/harbour">
    <script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Harbour news",
      "author":[{"@type":"Person","name":"Ada Writer"}],"datePublished":"2026-11-29T08:30:00+01:00","description":"The harbour reopens."}</script>
    </head><body><nav><a href="/">Home</a></nav><article><h1>Harbour news</h1>
    <p>The harbour reopens this week after the storm, with <a href="/boats">new boats</a> and a <a href="https://other.example/map">map</a> of the quays.</p>
    <p class="aside-note">Advertising note that the caller does not want.</p>
    <p>Fishermen said the repairs took longer than planned, and the council thanked them for their patience over the winter.</p>
    </article><div id="comments"><p>First comment here, of no interest to the caller at all.</p></div>
    <footer><a href="/about">About us</a> <a href="/boats">Boats</a> <a href="mailto:desk@news.example">Mail</a></footer></body></html>`;

  beforeAll(async () => {
    fx = await new Fixture({ '/news': send(200, 'text/html', page) }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });
  afterAll(async () => {
    await app.close();
    await fx.stop();
  });
  const fetchIt = (extra: object) =>
    http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: fx.url('/news'), format: 'text', ...extra });

  it('metadata from JSON-LD, OpenGraph, meta tags and the page', async () => {
    const r = (await fetchIt({})).body;
    expect(r.metadata).toEqual({
      author: 'Ada Writer',
      published_at: '2026-11-29T07:30:00.000Z',
      language: 'en-gb',
      site_name: 'Example Harbour Post',
      description: 'The harbour reopens.',
      canonical_url: 'https://news.example/harbour',
      image: fx.url('/img/lead.jpg'),
    });
    expect(r.links).toBeUndefined();
  });

  it("links: true lists the whole page's links, absolute, each once, whatever the selectors keep", async () => {
    const whole = [
      { url: fx.url('/'), text: 'Home' },
      { url: fx.url('/boats'), text: 'new boats' },
      { url: 'https://other.example/map', text: 'map' },
      { url: fx.url('/about'), text: 'About us' },
    ];
    expect((await fetchIt({ links: true })).body.links).toEqual(whole);
    const picked = (await fetchIt({ links: true, include_selectors: ['#comments p'] })).body;
    expect(picked.content).toBe('First comment here, of no interest to the caller at all.');
    expect(picked.links).toEqual(whole);
    expect((await fetchIt({ links: true, exclude_selectors: ['nav', 'footer'] })).body.links).toEqual(whole);
  });

  it('include_selectors picks the content; exclude_selectors takes parts out', async () => {
    const only = (await fetchIt({ include_selectors: ['#comments p'] })).body;
    expect(only.content).toBe('First comment here, of no interest to the caller at all.');
    const without = (await fetchIt({ exclude_selectors: ['.aside-note'] })).body;
    expect(without.content).toContain('The harbour reopens');
    expect(without.content).not.toContain('Advertising note');
    const plain = (await fetchIt({})).body;
    expect(plain.content).toContain('Advertising note');
  });

  it('bad selectors are a 400 naming the field', async () => {
    for (const [body, field] of [
      [{ include_selectors: ['div['] }, 'include_selectors'],
      [{ exclude_selectors: ['p::before'] }, 'exclude_selectors'],
      [{ exclude_selectors: Array.from({ length: 21 }, () => 'p') }, 'exclude_selectors'],
      [{ include_selectors: 'p' }, 'include_selectors'],
    ] as [object, string][]) {
      const r = await fetchIt(body);
      expect([field, r.status, r.body.error.code]).toEqual([field, 400, 'invalid_request']);
      expect(r.body.error.message).toContain(field);
    }
  });
});
