import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
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
import { ChangingSite, para } from '../support/changing-site';
import { newSecret, Receiver } from '../support/receiver';
import { MonitorService } from '../../src/monitors/monitor.service';

const OTHER_TOKEN = 'other-fleet-token-123';
const other = { Authorization: `Bearer ${OTHER_TOKEN}` };
const PAGES = ['one', 'two', 'three', 'four', 'five'];

describe.each(BACKENDS)('monitors (%s): pages read again on a schedule, told when they change', (backend) => {
  let apps: INestApplication[] = [];
  let site: ChangingSite;
  let hook: Receiver;
  let drop = async () => {};
  let env: Record<string, string>;
  const secret = newSecret();
  const clock = new TestClock(1_900_000_000_000);
  const http = (i = 0) => request(apps[i].getHttpServer());
  const tick = (i = 0) => apps[i].get(MonitorService).tick();
  const runsOf = async (id: string) => (await http().get(`/v1/monitors/${id}/runs`).set(fleet)).body.runs;
  /** The run a tick started, once it has ended: its events by type. */
  const ran = async (id: string) => {
    const [last] = await runsOf(id);
    const job = await waitForJob(apps[0], last.id);
    const events = (await http().get(`/v1/batch/${last.id}/events`).set(fleet)).body.events as {
      type: string;
      data: any;
    }[];
    const results = (await http().get(`/v1/batch/${last.id}/results`).set(fleet)).body.results;
    return { job, events, statuses: results.map((r: any) => r.result?.changes?.status) };
  };
  const startApps = async () => {
    apps.push((await createTestApp(env, { clock })).app);
    if (backend === 'postgres') apps.push((await createTestApp(env, { clock })).app);
  };
  const closeApps = async () => {
    for (const a of apps) await a.close();
    apps = [];
  };

  beforeAll(async () => {
    site = await new ChangingSite().start();
    hook = await new Receiver(secret, () => clock.t).start();
    env = {
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_MONITOR_TICK_MS: '60000',
      // The test clock jumps minutes at a time: instances are not lost for it (PostgreSQL).
      SIFT_INSTANCE_TTL_S: '3600',
      SIFT_RESTRICTED_MONITORS: '2',
      SIFT_RESTRICTED_MONITOR_MIN_INTERVAL_S: '3600',
      SIFT_FLEET_MONITORS: '20',
      SIFT_FLEET_MAX_LIVE_JOBS: '3',
      SIFT_FLEET_MONITOR_MIN_INTERVAL_S: '60',
      SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet,${OTHER_TOKEN}:other-caller:fleet,${RESTRICTED_TOKEN}:restricted-caller:restricted`,
      SIFT_DB: tmpDbPath(),
    };
    if (backend === 'postgres') {
      const pg = await createPgDatabase();
      drop = pg.drop;
      env.SIFT_DATABASE_URL = pg.url;
    }
    await startApps();
  }, 60_000);
  afterAll(async () => {
    await closeApps();
    await drop();
    await site?.stop();
    await hook?.stop();
  });

  it('new → same (304s, no body) → changed and removed (signed webhooks with the diff) → back; a slot runs once', async () => {
    PAGES.forEach((p) => site.set(p, [para(`${p} first`), para(`${p} second`)].join('\n')));
    const created = await http()
      .post('/v1/monitors')
      .set(fleet)
      .send({
        name: 'five pages',
        urls: PAGES.map((p) => site.url(p)),
        every_s: 60,
        options: { format: 'text' },
        webhook: { url: hook.url, secret },
      });
    expect([created.status, created.body.error]).toEqual([201, undefined]);
    const id = created.body.id;
    expect(created.body).toMatchObject({
      name: 'five pages',
      every_s: 60,
      notify: 'changed',
      paused: false,
      runs: 0,
    });
    expect(created.body.webhook).toEqual({ url: hook.url });

    // Each instance ticks; one run starts.
    expect((await Promise.all(apps.map((_, i) => tick(i)))).reduce((a, b) => a + b)).toBe(1);
    const first = await ran(id);
    expect(first.job).toMatchObject({
      status: 'done',
      kind: 'monitor_run',
      monitor_id: id,
      targets_total: 5,
    });
    expect(first.statuses).toEqual(['new', 'new', 'new', 'new', 'new']);
    const done1 = first.events.find((e) => e.type === 'monitor.run.done');
    expect(done1?.data).toEqual({ monitor_id: id, pages: 5, changed: 0, removed: 0, failed: 0 });
    // The run's last event is still the job's own end.
    expect(first.events[first.events.length - 1].type).toBe('batch.done');
    expect(site.count(site.bodies)).toBe(5);

    // Not due again until its next slot.
    expect(await tick()).toBe(0);
    clock.t += 60_000;
    expect(await tick()).toBe(1);
    const second = await ran(id);
    expect(second.statuses).toEqual(['same', 'same', 'same', 'same', 'same']);
    // Asked with the ETag: five 304s, no body sent again.
    expect([site.count(site.bodies), site.count(site.notModified)]).toEqual([5, 5]);
    // notify: changed, and nothing changed: the webhook heard nothing.
    expect(hook.received).toHaveLength(0);

    site.set('two', [para('two first'), para('two changed')].join('\n'));
    site.set('four', null);
    clock.t += 60_000;
    expect(await tick()).toBe(1);
    const third = await ran(id);
    expect(third.statuses).toEqual(['same', 'changed', 'same', 'removed', 'same']);
    const changed = third.events.find((e) => e.type === 'page.changed')!;
    expect(changed.data).toMatchObject({
      idx: 1,
      url: site.url('two'),
      status: 200,
      diff: { added: 1, removed: 1, truncated: false },
    });
    expect(changed.data.diff.text).toContain(`\n-${para('two second')}\n+${para('two changed')}\n`);
    expect(changed.data.diff.text).not.toContain('No newline');
    await waitUntil(() => hook.received.length >= 3 || undefined, 'three webhooks');
    expect(hook.rejected).toEqual([]);
    // The pages' events in the order their pages ended, then the run's end.
    const got = (type: string) => hook.received.find((r) => r.payload.type === type)!.payload;
    expect(
      hook.received
        .map((r) => r.payload.type)
        .slice(0, 2)
        .sort(),
    ).toEqual(['page.changed', 'page.removed']);
    expect(got('page.changed').data).toEqual(changed.data);
    expect(got('page.removed').data).toMatchObject({ idx: 3, url: site.url('four'), status: 404 });
    expect(hook.received[2].payload.data).toEqual({
      monitor_id: id,
      pages: 5,
      changed: 1,
      removed: 1,
      failed: 0,
    });

    site.set('four', para('four is back'));
    clock.t += 60_000;
    expect(await tick()).toBe(1);
    expect((await ran(id)).statuses).toEqual(['same', 'same', 'same', 'new', 'same']);

    // Slots passed with no tick (every instance down): one run, not five.
    clock.t += 5 * 60_000 + 1000;
    expect(await tick()).toBe(1);
    await ran(id);
    expect(await tick()).toBe(0);
    const view = (await http().get(`/v1/monitors/${id}`).set(fleet)).body;
    expect(view.runs).toBe(5);
    expect(Date.parse(view.next_run_at)).toBeGreaterThan(clock.t);
    expect(await runsOf(id)).toHaveLength(5);
    expect((await http().delete(`/v1/monitors/${id}`).set(fleet)).status).toBe(200);
  });

  it('pause, resume, delete; another caller sees none of it; a restart between ticks loses no run', async () => {
    site.set('solo', para('solo'));
    const m = (
      await http()
        .post('/v1/monitors')
        .set(fleet)
        .send({ name: 'hourly', urls: [site.url('solo')], schedule: '0 * * * *', notify: 'always' })
    ).body;
    expect(m.schedule).toBe('0 * * * *');
    expect(new Date(m.next_run_at).getUTCMinutes()).toBe(0);
    expect((await http().get(`/v1/monitors/${m.id}`).set(other)).status).toBe(404);
    expect((await http().post(`/v1/monitors/${m.id}/pause`).set(other)).status).toBe(404);
    expect((await http().get('/v1/monitors').set(other)).body.monitors).toEqual([]);

    expect((await http().post(`/v1/monitors/${m.id}/pause`).set(fleet)).body.paused).toBe(true);
    clock.t = Date.parse(m.next_run_at) + 1000;
    expect(await tick()).toBe(0);
    const resumed = (await http().post(`/v1/monitors/${m.id}/resume`).set(fleet)).body;
    expect(resumed.paused).toBe(false);
    expect(Date.parse(resumed.next_run_at)).toBe(Date.parse(m.next_run_at) + 3600_000);

    // The process goes; a new one on the same database runs the slot that came meanwhile.
    await closeApps();
    clock.t = Date.parse(resumed.next_run_at) + 5000;
    await startApps();
    expect(await tick()).toBeGreaterThanOrEqual(1);
    const r = await ran(m.id);
    expect(r.statuses).toEqual(['new']);
    expect(r.events.filter((e) => e.type === 'monitor.run.done')).toHaveLength(1);

    expect((await http().delete(`/v1/monitors/${m.id}`).set(fleet)).body).toEqual({ deleted: true });
    expect((await http().get(`/v1/monitors/${m.id}`).set(fleet)).status).toBe(404);
    // Its runs stay readable as jobs.
    expect((await http().get(`/v1/batch/${r.job.id}`).set(fleet)).body.kind).toBe('monitor_run');
  });

  it('limits per class: a restricted monitor more often than allowed is 400, one too many is 429; bad requests are 400', async () => {
    const ask = (who: Record<string, string>, body: object) =>
      http().post('/v1/monitors').set(who).send(body);
    const often = await ask(restricted, { name: 'x', urls: ['http://example.com/'], every_s: 60 });
    expect([often.status, often.body.error.code]).toEqual([400, 'invalid_request']);
    expect(often.body.error.message).toContain('every 3600 s');
    const cron = await ask(restricted, { name: 'x', urls: ['http://example.com/'], schedule: '*/5 * * * *' });
    expect([cron.status, cron.body.error.message]).toEqual([400, expect.stringContaining('300 s apart')]);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const ok = await ask(restricted, {
        name: `r${i}`,
        urls: ['http://example.com/'],
        schedule: '0 3 * * *',
      });
      expect(ok.status).toBe(201);
      ids.push(ok.body.id);
    }
    const over = await ask(restricted, { name: 'r3', urls: ['http://example.com/'], every_s: 86400 });
    expect([over.status, over.body.error.code]).toEqual([429, 'too_many_monitors']);
    for (const id of ids)
      expect((await http().delete(`/v1/monitors/${id}`).set(restricted)).status).toBe(200);

    for (const [body, words] of [
      [{ name: 'x', every_s: 60 }, 'either urls or crawl'],
      [
        { name: 'x', urls: ['http://a.test/'], crawl: { url: 'http://a.test/' }, every_s: 60 },
        'either urls or crawl',
      ],
      [{ name: 'x', urls: ['http://a.test/'] }, 'either schedule or every_s'],
      [{ name: 'x', urls: ['http://a.test/'], schedule: 'every day' }, 'not a cron expression'],
      [
        { name: 'x', urls: ['http://a.test/', 'ftp://a.test/'], every_s: 60 },
        'urls.1 must be an absolute http',
      ],
      [{ name: 'x', urls: ['http://a.test/'], every_s: 60, options: { formats: ['bogus'] } }, 'formats'],
      [
        {
          name: 'x',
          crawl: { url: 'http://a.test/', webhook: { url: 'http://a.test/', secret } },
          every_s: 60,
        },
        "monitor's own",
      ],
      [{ name: '', urls: ['http://a.test/'], every_s: 60 }, 'name'],
      [{ name: 'x', urls: ['http://a.test/'], every_s: 60, notify: 'sometimes' }, 'notify'],
    ] as const) {
      const r = await ask(fleet, body);
      expect({ body, status: r.status, code: r.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'invalid_request',
      });
      expect(r.body.error.message).toContain(words);
    }
  });

  it('a slot whose last run still runs, or whose caller is at its live-job limit, passes with why', async () => {
    site.set('slow', para('slow'));
    const m = (
      await http()
        .post('/v1/monitors')
        .set(fleet)
        .send({ name: 'slow', urls: [site.url('slow')], every_s: 60 })
    ).body;
    site.holding = true;
    expect(await tick()).toBe(1);
    const [run] = await runsOf(m.id);
    await waitUntil(() => site.waiting.length > 0 || undefined, 'the run to reach the site');
    clock.t += 60_000;
    expect(await tick()).toBe(0);
    const passed = (await http().get(`/v1/monitors/${m.id}`).set(fleet)).body;
    expect([passed.runs, passed.last_error]).toEqual([1, 'the previous run was still running']);
    expect(Date.parse(passed.next_run_at)).toBeGreaterThan(clock.t);
    site.release();
    await waitForJob(apps[0], run.id);

    // Another caller at its live-job limit (3): its monitor's slot passes, saying so; no job is made.
    site.holding = true;
    const held: string[] = [];
    for (let i = 0; i < 3; i++) {
      const b = await http()
        .post('/v1/batch')
        .set(other)
        .send({ targets: [{ url: site.url(`held${i}`) }] });
      expect(b.status).toBe(202);
      held.push(b.body.id);
    }
    const o = (
      await http()
        .post('/v1/monitors')
        .set(other)
        .send({ name: 'busy', urls: [site.url('slow')], every_s: 60 })
    ).body;
    expect(o.error).toBeUndefined();
    expect(await tick()).toBe(0);
    const busy = (await http().get(`/v1/monitors/${o.id}`).set(other)).body;
    expect([busy.runs, busy.last_error]).toEqual([0, expect.stringContaining('live jobs')]);
    expect((await http().get(`/v1/monitors/${o.id}/runs`).set(other)).body.runs).toEqual([]);
    site.release();
    for (const id of held) await waitForJob(apps[0], id, other);
    await ran(m.id);
    for (const [id, who] of [
      [m.id, fleet],
      [o.id, other],
    ] as const)
      expect((await http().delete(`/v1/monitors/${id}`).set(who)).status).toBe(200);
  });

  it('a crawl monitor runs its crawl each run, each page against the last run', async () => {
    site.set('hub', para('hub'));
    const m = (
      await http()
        .post('/v1/monitors')
        .set(fleet)
        .send({ name: 'site', crawl: { url: site.url('hub'), limit: 1, sitemap: 'skip' }, every_s: 3600 })
    ).body;
    expect(m.crawl).toMatchObject({ url: site.url('hub'), limit: 1 });
    expect(await tick()).toBe(1);
    expect((await ran(m.id)).statuses).toEqual(['new']);
    site.set('hub', para('hub changed'));
    clock.t += 3600_000;
    expect(await tick()).toBe(1);
    const r = await ran(m.id);
    expect(r.statuses).toEqual(['changed']);
    expect(r.events.filter((e) => e.type === 'page.changed')).toHaveLength(1);
    await http().delete(`/v1/monitors/${m.id}`).set(fleet);
  });
});
