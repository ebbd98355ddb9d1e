import request from 'supertest';
import { Dcache } from '../../src/dcache';
import { InstanceService } from '../../src/cluster/instance.service';
import { createTestApp, tmpDbPath } from '../support/app';
import { createPgDatabase } from '../support/backends';

describe('app', () => {
  it('boots and answers /healthz with its backend and instance', async () => {
    const { app } = await createTestApp();
    const res = await request(app.getHttpServer()).get('/healthz').expect(200);
    expect(res.body).toEqual({
      ok: true,
      backend: 'sqlite',
      instance: app.get(InstanceService).id,
      database: 'reachable',
      render: true,
    });
    await app.close();
  });

  it('on SIFT_DATABASE_URL, runs on PostgreSQL and says so', async () => {
    const pg = await createPgDatabase();
    const { app } = await createTestApp({ SIFT_DATABASE_URL: pg.url });
    try {
      const res = await request(app.getHttpServer()).get('/healthz').expect(200);
      expect(res.body).toMatchObject({ ok: true, backend: 'postgres' });
      const metrics = (await request(app.getHttpServer()).get('/metrics')).text;
      expect(metrics).toMatch(/^sift_instances 1$/m);
      expect(metrics).toContain(`sift_claims{instance="${res.body.instance}"} 0`);
    } finally {
      await app.close();
      await pg.drop();
    }
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
