import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { AuthGuard } from '../../src/api/auth.guard';
import { SiftValidationPipe } from '../../src/commands/validation.pipe';
import { createTestApp, FLEET_TOKEN } from '../support/app';
import { Fixture, html, send } from '../support/fixture';

/**
 * One entrance per route: every POST /v1/fetch, a valid body and a cache hit included, goes
 * through Nest's guard and pipe, so a guard or pipe added to FetchController sees every request.
 */
describe('POST /v1/fetch has one entrance', () => {
  let app: INestApplication;
  let site: Fixture;
  const guard = jest.spyOn(AuthGuard.prototype, 'canActivate');
  const pipe = jest.spyOn(SiftValidationPipe.prototype, 'transform');

  beforeAll(async () => {
    site = await new Fixture({
      '/*': send(200, 'text/html', html('<article><p>A page with words enough to keep.</p></article>')),
    }).start();
    ({ app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' }));
  });
  afterAll(async () => {
    await app.close();
    await site.stop();
    guard.mockRestore();
    pipe.mockRestore();
  });

  it("a fetch and a cache hit of it each pass the route's guard and pipe", async () => {
    for (const cached of [false, true]) {
      guard.mockClear();
      pipe.mockClear();
      const r = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set('Authorization', `Bearer ${FLEET_TOKEN}`)
        .send({ url: site.url('/a') });
      expect([r.status, r.body.cached]).toEqual([200, cached]);
      expect(guard).toHaveBeenCalledTimes(1);
      expect(pipe.mock.calls.some(([, meta]) => meta.type === 'body')).toBe(true);
    }
  });
});
