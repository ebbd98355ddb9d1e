import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ProfileStore } from '../../src/dcache';
import { seal, unseal } from '../../src/profiles/profile-seal';
import { createTestApp, fleet, FLEET_TOKEN, RESTRICTED_TOKEN, waitForJob, waitUntil } from '../support/app';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { LogSink } from '../support/log-sink';
import { newSecret, Receiver } from '../support/receiver';
import { LOGIN_ACTIONS as LOGIN, SessionSite } from '../support/session-site';

const KEY = 'a1'.repeat(32);
const OTHER_TOKEN = 'other-fleet-token-123';
const other = { Authorization: `Bearer ${OTHER_TOKEN}` };

describe.each(BACKENDS)(
  'browser profiles (%s): saved by a login, used later, only by their owner',
  (backend) => {
    let apps: INestApplication[] = [];
    let site: SessionSite;
    let logs: LogSink;
    let hook: Receiver;
    let drop = async () => {};
    const secret = newSecret();
    /** Every answer's body, to look for the session id in. */
    const seen: string[] = [];
    const http = (i = 0) => {
      const agent = request(apps[i].getHttpServer());
      return agent;
    };
    const fetchIt = async (body: object, who = fleet, i = 0) => {
      const r = await http(i)
        .post('/v1/fetch')
        .set(who)
        .send({ format: 'text', max_age_s: 0, ...body });
      seen.push(r.text);
      return r;
    };

    beforeAll(async () => {
      site = await new SessionSite(() => 'http://127.0.0.9/').start('127.0.0.2');
      hook = await new Receiver(secret).start();
      logs = new LogSink();
      const env: Record<string, string> = {
        SIFT_FLEET_ALLOW: '127.0.0.1/32,127.0.0.2/32',
        SIFT_SECRET_KEY: KEY,
        SIFT_LOG_LEVEL: 'debug',
        SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet,${OTHER_TOKEN}:other-caller:fleet,${RESTRICTED_TOKEN}:restricted-caller:restricted`,
      };
      if (backend === 'postgres') {
        const pg = await createPgDatabase();
        drop = pg.drop;
        env.SIFT_DATABASE_URL = pg.url;
      }
      apps.push((await createTestApp(env, { logger: logs })).app);
      // On PostgreSQL, a second instance on the same database uses what the first saved.
      if (backend === 'postgres') apps.push((await createTestApp(env, { logger: logs })).app);
    }, 60_000);
    afterAll(async () => {
      for (const a of apps) await a.close();
      apps = [];
      await drop();
      await site?.stop();
      await hook?.stop();
    });

    it('a login by actions saves the browser state; later fetches read the page behind it', async () => {
      const created = await http().post('/v1/profiles').set(fleet).send({ name: 'shop' });
      expect([created.status, created.body.name, created.body.saved]).toEqual([201, 'shop', false]);
      const again = await http().post('/v1/profiles').set(fleet).send({ name: 'shop' });
      expect([again.status, again.body.error.code]).toEqual([409, 'profile_exists']);
      // Before any login, the account page sends to the login form.
      const before = await fetchIt({ url: site.url('/account'), profile: { name: 'shop' } });
      expect(before.body.content).not.toContain('Account of ada');
      const login = await fetchIt({
        url: site.url('/login'),
        actions: LOGIN,
        profile: { name: 'shop', save: true },
      });
      expect([login.status, login.body.error]).toEqual([200, undefined]);
      expect(login.body.content).toContain('Account of ada');
      expect(site.sessions.size).toBe(1);
      const view = await http().get('/v1/profiles/shop').set(fleet);
      expect([view.body.saved, view.body.bytes > 0]).toEqual([true, true]);
      seen.push(view.text);
      const last = apps.length - 1;
      // A static fetch sends the profile's cookies; a render starts with its state; another instance too.
      const hits = site.accountHits;
      const plain = await fetchIt(
        { url: site.url('/account'), render: 'never', profile: { name: 'shop' } },
        fleet,
        last,
      );
      expect([plain.status, plain.body.rendered, plain.body.content]).toEqual([
        200,
        false,
        expect.stringContaining('Account of ada'),
      ]);
      const rendered = await fetchIt({
        url: site.url('/account'),
        render: 'always',
        profile: { name: 'shop' },
      });
      expect(rendered.body.content).toContain('Account of ada');
      expect(site.accountHits).toBeGreaterThanOrEqual(hits + 2);
    }, 90_000);

    it('a batch and a crawl use it; their results, events and webhooks carry none of it', async () => {
      const job = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({
          targets: [{ url: site.url('/account') }],
          options: { format: 'text', max_age_s: 0, profile: { name: 'shop' } },
          webhook: { url: hook.url, secret },
        });
      expect(job.status).toBe(202);
      await waitForJob(apps[0], job.body.id);
      const results = await http().get(`/v1/batch/${job.body.id}/results`).set(fleet);
      expect(results.body.results[0].result.content).toContain('Account of ada');
      const crawl = await http()
        .post('/v1/crawl')
        .set(fleet)
        .send({
          url: site.url('/account'),
          limit: 1,
          options: { format: 'text', max_age_s: 0, profile: { name: 'shop' } },
        });
      await waitForJob(apps[0], crawl.body.id);
      const pages = await http().get(`/v1/batch/${crawl.body.id}/results`).set(fleet);
      expect(pages.body.results[0].result.content).toContain('Account of ada');
      for (const id of [job.body.id, crawl.body.id]) {
        seen.push((await http().get(`/v1/batch/${id}`).set(fleet)).text);
        seen.push((await http().get(`/v1/batch/${id}/events`).set(fleet)).text);
      }
      seen.push(results.text, pages.text);
      await waitUntil(
        () => hook.received.some((r) => r.payload.type === 'batch.done') || undefined,
        "the webhook of the batch's end",
      );
      const delivered = hook.received.map((r) => r.body);
      expect(delivered.length).toBeGreaterThan(0);
      const sid = [...site.sessions][0];
      for (const text of [...seen, ...delivered, logs.lines.join('\n')]) expect(text).not.toContain(sid);
      // At rest it is sealed: the row holds no cookie in the clear.
      const row = await apps[0].get(ProfileStore).get('fleet:fleet-caller', 'shop');
      expect(row?.state.startsWith('v1.')).toBe(true);
      expect(row?.state).not.toContain(sid);
    }, 90_000);

    it('another caller cannot see, use or delete it; its owner deletes it', async () => {
      const used = await fetchIt({ url: site.url('/account'), profile: { name: 'shop' } }, other);
      expect([used.status, used.body.error.code]).toEqual([404, 'not_found']);
      expect((await http().get('/v1/profiles/shop').set(other)).status).toBe(404);
      expect((await http().delete('/v1/profiles/shop').set(other)).status).toBe(404);
      expect((await http().get('/v1/profiles').set(other)).body).toEqual({ profiles: [] });
      const mine = await http().get('/v1/profiles').set(fleet);
      expect(mine.body.profiles.map((p: { name: string }) => p.name)).toEqual(['shop']);
      // A job naming it is refused when submitted, as is a crawl.
      const batch = await http()
        .post('/v1/batch')
        .set(other)
        .send({ targets: [{ url: site.url('/account'), options: { profile: { name: 'shop' } } }] });
      expect([batch.status, batch.body.error?.code, batch.body.error?.message]).toEqual([
        404,
        'not_found',
        'no such profile "shop"',
      ]);
      const crawl = await http()
        .post('/v1/crawl')
        .set(other)
        .send({ url: site.url('/account'), options: { profile: { name: 'shop' } } });
      expect([crawl.status, crawl.body.error?.code]).toEqual([404, 'not_found']);
      expect((await http().delete('/v1/profiles/shop').set(fleet)).body).toEqual({ deleted: true });
      const gone = await fetchIt({ url: site.url('/account'), profile: { name: 'shop' } });
      expect([gone.status, gone.body.error.code]).toEqual([404, 'not_found']);
    }, 90_000);

    it("Firecrawl's profile {name, saveChanges} maps, made on first save", async () => {
      const saved = await http(0)
        .post('/v2/scrape')
        .set(fleet)
        .send({
          url: site.url('/login'),
          maxAge: 0,
          actions: LOGIN,
          profile: { name: 'fc', saveChanges: true },
        });
      expect([saved.status, saved.body.data?.markdown]).toEqual([
        200,
        expect.stringContaining('Account of ada'),
      ]);
      const used = await http(0)
        .post('/v2/scrape')
        .set(fleet)
        .send({ url: site.url('/account'), maxAge: 0, profile: { name: 'fc' } });
      expect(used.body.data.markdown).toContain('Account of ada');
      const bad = await http(0)
        .post('/v2/scrape')
        .set(fleet)
        .send({ url: site.url('/account'), profile: { name: 'fc', shared: true } });
      expect([bad.status, bad.body.error]).toEqual([400, expect.stringContaining('profile.shared')]);
    }, 90_000);

    it('bad names and shapes are 400', async () => {
      for (const body of [{ name: '' }, { name: 'a b' }, { name: 'x'.repeat(65) }, {}]) {
        const r = await http().post('/v1/profiles').set(fleet).send(body);
        expect([r.status, r.body.error.code]).toEqual([400, 'invalid_request']);
      }
      for (const profile of [
        'shop',
        { name: 'a/b' },
        { name: 'shop', save: 'yes' },
        { name: 'shop', owner: 'x' },
      ]) {
        const r = await fetchIt({ url: site.url('/account'), profile });
        expect([r.status, r.body.error.message]).toEqual([400, expect.stringContaining('profile must be')]);
      }
      const never = await fetchIt({
        url: site.url('/account'),
        render: 'never',
        profile: { name: 'x', save: true },
      });
      expect([never.status, never.body.error.message]).toEqual([
        400,
        expect.stringContaining('render "never"'),
      ]);
    });
  },
);

describe('browser profiles: without SIFT_SECRET_KEY, and sealed', () => {
  it('are refused with the way to turn them on', async () => {
    const { app } = await createTestApp({});
    try {
      const r = await request(app.getHttpServer()).post('/v1/profiles').set(fleet).send({ name: 'shop' });
      expect([r.status, r.body.error.hint]).toEqual([400, expect.stringContaining('SIFT_SECRET_KEY')]);
      const f = await request(app.getHttpServer())
        .post('/v1/fetch')
        .set(fleet)
        .send({ url: 'http://127.0.0.1:9/', profile: { name: 'shop' } });
      expect([f.status, f.body.error.hint]).toEqual([400, expect.stringContaining('SIFT_SECRET_KEY')]);
    } finally {
      await app.close();
    }
  });

  it('a sealed state opens only with its key, its owner and its name', () => {
    const key = Buffer.from(KEY, 'hex');
    const sealed = seal(key, 'fleet:a', 'shop', '{"cookies":[]}');
    expect(unseal(key, 'fleet:a', 'shop', sealed)).toBe('{"cookies":[]}');
    expect(unseal(key, 'fleet:b', 'shop', sealed)).toBeUndefined();
    expect(unseal(key, 'fleet:a', 'other', sealed)).toBeUndefined();
    expect(unseal(Buffer.alloc(32, 7), 'fleet:a', 'shop', sealed)).toBeUndefined();
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(unseal(key, 'fleet:a', 'shop', `v1.${raw.toString('base64')}`)).toBeUndefined();
    expect(seal(key, 'fleet:a', 'shop', 'x')).not.toBe(seal(key, 'fleet:a', 'shop', 'x'));
  });
});
