import request from 'supertest';
import { Dcache } from '../../src/dcache';
import { createTestApp, tmpDbPath } from '../support/app';

describe('app', () => {
  it('boots and answers /healthz', async () => {
    const { app } = await createTestApp();
    const res = await request(app.getHttpServer()).get('/healthz').expect(200);
    expect(res.body).toEqual({ ok: true });
    await app.close();
  });

  it('opens and migrates the configured file database, and closing the app closes it', async () => {
    const file = tmpDbPath();
    const { app } = await createTestApp({ SIFT_DB: file });
    const dcache = app.get(Dcache);
    expect(dcache.isOpen).toBe(true);
    expect(dcache.sqlite!.name).toBe(file);
    await app.close();
    expect(dcache.isOpen).toBe(false);
    expect(dcache.sqlite!.open).toBe(false);
  });
});
