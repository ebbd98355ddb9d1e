import type { INestApplication } from '@nestjs/common';
import { PageService } from '../../src/pages/page.service';
import { createTestApp } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

/**
 * A page answered from the cache is answered once: later hits of the same ask reuse that answer
 * (its envelope and what each writer made of it), known by the cached page's digest, fetch time
 * and stored fields, the same object while it stays in the cache.
 */
describe('cache hits reuse their answer', () => {
  let app: INestApplication;
  let site: Fixture;
  const caller = { name: 'fleet-caller', callerClass: 'fleet' as const };

  beforeAll(async () => {
    const body =
      '<article><p>A page with words enough to be kept as its article, and then some.</p></article>';
    site = await new Fixture({ '/*': send(200, 'text/html', html(body)) }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });
  afterAll(async () => {
    await app.close();
    await site.stop();
  });

  it('the second hit of the same ask is answered with the first hit’s answer', async () => {
    const pages = app.get(PageService);
    const ask = { url: site.url('/a'), format: 'markdown' as const };
    const fetched = await pages.fetchDetailed(caller, ask);
    expect([fetched.envelope.cached, fetched.answer]).toEqual([false, undefined]);
    const first = await pages.fetchDetailed(caller, ask);
    const second = await pages.fetchDetailed(caller, ask);
    expect(first.envelope.cached).toBe(true);
    expect(first.answer).toBeDefined();
    expect(second.answer).toBe(first.answer);
    expect(second.envelope).toBe(first.envelope);
    // Another ask of the same page is an answer of its own.
    const other = await pages.fetchDetailed(caller, { ...ask, format: 'text' });
    expect(other.answer).not.toBe(first.answer);
  });
});
