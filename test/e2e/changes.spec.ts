import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, fleet, FLEET_TOKEN, RESTRICTED_TOKEN, TestClock } from '../support/app';
import { BACKENDS, createPgDatabase } from '../support/backends';
import { ChangingSite, para } from '../support/changing-site';
import { Dcache } from '../../src/dcache';
import { SweeperService } from '../../src/runner/sweeper.service';
import { ChangeTracker } from '../../src/pages/changes';
import { send, Fixture } from '../support/fixture';

const OTHER_TOKEN = 'other-fleet-token-123';
const other = { Authorization: `Bearer ${OTHER_TOKEN}` };

describe.each(BACKENDS)("change tracking (%s): each fetch against the caller's previous one", (backend) => {
  let apps: INestApplication[] = [];
  let site: ChangingSite;
  let errors: Fixture;
  let drop = async () => {};
  const clock = new TestClock(1_900_000_000_000);
  const http = (i = 0) => request(apps[i].getHttpServer());
  const track = async (url: string, who = fleet, extra: object = {}, i = 0) => {
    const r = await http(i)
      .post('/v1/fetch')
      .set(who)
      .send({ url, formats: ['markdown', 'changes'], max_age_s: 0, ...extra });
    expect([r.status, r.body.error]).toEqual([200, undefined]);
    return r.body;
  };
  const versions = async (owner: string) => {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM page_version WHERE owner = ${owner}`.execute(
      apps[0].get(Dcache).kysely,
    );
    return Number(r.rows[0].n);
  };

  beforeAll(async () => {
    site = await new ChangingSite().start();
    errors = await new Fixture({ '/busy': send(503, 'text/html', '<p>busy</p>') }).start();
    const env: Record<string, string> = {
      SIFT_FLEET_ALLOW: '127.0.0.0/8',
      SIFT_HISTORY_VERSIONS: '3',
      SIFT_HISTORY_TTL_S: '3600',
      SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet,${OTHER_TOKEN}:other-caller:fleet,${RESTRICTED_TOKEN}:restricted-caller:restricted`,
    };
    if (backend === 'postgres') {
      const pg = await createPgDatabase();
      drop = pg.drop;
      env.SIFT_DATABASE_URL = pg.url;
    }
    apps.push((await createTestApp(env, { clock })).app);
    if (backend === 'postgres') apps.push((await createTestApp(env, { clock })).app);
  }, 60_000);
  afterAll(async () => {
    for (const a of apps) await a.close();
    apps = [];
    await drop();
    await site?.stop();
    await errors?.stop();
  });

  it('new, then same from a 304 (no body sent), changed with its diff, removed (404), back', async () => {
    const lines = [para('first'), para('second'), para('third')];
    site.set('a', lines.join('\n'));
    const first = await track(site.url('a'));
    expect(first.changes).toEqual({
      status: 'new',
      previous_at: null,
      diff: { text: '', added: 0, removed: 0 },
    });
    expect(first.formats.markdown).toContain('The second');
    const firstAt = new Date(clock.t).toISOString();

    clock.t += 60_000;
    const same = await track(site.url('a'));
    expect(same.changes).toEqual({
      status: 'same',
      previous_at: firstAt,
      diff: { text: '', added: 0, removed: 0 },
    });
    expect(same.revalidated).toBe(true);
    expect([site.count(site.bodies, 'a'), site.count(site.notModified, 'a')]).toEqual([1, 1]);

    clock.t += 60_000;
    site.set('a', [lines[0], para('changed second'), lines[2]].join('\n'));
    const changed = await track(site.url('a'));
    expect(changed.changes.status).toBe('changed');
    expect(changed.changes.previous_at).toBe(new Date(clock.t - 60_000).toISOString());
    expect(changed.changes.diff).toMatchObject({ added: 1, removed: 1 });
    const diff: string = changed.changes.diff.text;
    expect(diff.split('\n').slice(0, 2)).toEqual(['--- previous', '+++ current']);
    expect(diff).toContain(`\n-${para('second')}\n+${para('changed second')}\n`);
    expect(diff).toContain(`\n ${para('first')}\n`);
    // The diff counts in bytes, with the markdown.
    expect(changed.bytes).toBe(Buffer.byteLength(changed.formats.markdown) + Buffer.byteLength(diff));

    clock.t += 60_000;
    site.set('a', null);
    const removed = await track(site.url('a'));
    expect(removed.status).toBe(404);
    expect(removed.changes.status).toBe('removed');
    expect(removed.changes.diff.added).toBe(0);
    expect(removed.changes.diff.removed).toBeGreaterThanOrEqual(3);
    expect(removed.changes.diff.text).toContain(`-${para('changed second')}`);
    clock.t += 60_000;
    expect((await track(site.url('a'))).changes.status).toBe('same');

    clock.t += 60_000;
    site.set('a', lines.join('\n'));
    const back = await track(site.url('a'));
    expect(back.changes).toMatchObject({ status: 'new', diff: { text: '', added: 0, removed: 0 } });
  });

  it("callers have histories of their own; other options are another history; formats ['changes'] alone", async () => {
    site.set('b', para('bee'));
    expect((await track(site.url('b'))).changes.status).toBe('new');
    expect((await track(site.url('b'))).changes.status).toBe('same');
    // Another caller, the same page: its first fetch.
    expect((await track(site.url('b'), other)).changes.status).toBe('new');
    // Other options (another extraction): another history.
    expect((await track(site.url('b'), fleet, { exclude_selectors: ['nav'] })).changes.status).toBe('new');
    const alone = await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: site.url('b'), formats: ['changes'] });
    expect([alone.status, alone.body.content, alone.body.formats, alone.body.changes.status]).toEqual([
      200,
      '',
      {},
      'same',
    ]);
    // A cached answer (max_age_s not 0) is compared too: the same content, fetched before.
    expect((await track(site.url('b'), fleet, { max_age_s: 3600 })).changes.status).toBe('same');
  });

  it('an error other than 404/410 leaves the history alone; a small max_bytes cuts the diff', async () => {
    const busy = await http()
      .post('/v1/fetch')
      .set(fleet)
      .send({ url: errors.url('/busy'), formats: ['markdown', 'changes'], max_age_s: 0 });
    expect([busy.status, busy.body.status, busy.body.changes]).toEqual([200, 503, undefined]);
    const before = await versions('fleet:fleet-caller');

    site.set('c', Array.from({ length: 20 }, (_, i) => para(`line ${i}`)).join('\n'));
    await track(site.url('c'));
    site.set('c', Array.from({ length: 20 }, (_, i) => para(`other ${i}`)).join('\n'));
    const cut = await track(site.url('c'), fleet, { formats: ['changes'], max_bytes: 500 });
    expect(cut.changes.status).toBe('changed');
    expect(cut.changes.diff).toMatchObject({ added: 20, removed: 20 });
    expect([cut.truncated, cut.bytes, Buffer.byteLength(cut.changes.diff.text) <= 500]).toEqual([
      true,
      cut.bytes,
      true,
    ]);
    expect(await versions('fleet:fleet-caller')).toBe(before + 2);
  });

  it('a history keeps SIFT_HISTORY_VERSIONS versions, and the sweeper forgets it after SIFT_HISTORY_TTL_S', async () => {
    for (let v = 0; v < 6; v++) {
      site.set('d', para(`version ${v}`));
      clock.t += 1000;
      expect((await track(site.url('d'), other)).changes.status).toBe(v === 0 ? 'new' : 'changed');
    }
    // other-caller: b's one version and d's last three.
    expect(await versions('fleet:other-caller')).toBe(1 + 3);
    clock.t += 3601_000;
    await apps[0].get(SweeperService).tick();
    expect(await versions('fleet:other-caller')).toBe(0);
    expect((await track(site.url('d'), other)).changes.status).toBe('new');
  });

  it("a job's target tried again is told what its first try was; another fetch is told the truth", async () => {
    const tracker = apps[0].get(ChangeTracker);
    const caller = { name: 'fleet-caller', callerClass: 'fleet' as const };
    expect((await tracker.track(caller, 'retried', 200, 'one\n', 'job:0'))!.status).toBe('new');
    const first = await tracker.track(caller, 'retried', 200, 'two\n', 'job:1');
    expect(first).toMatchObject({ status: 'changed', diff: { added: 1, removed: 1 } });
    // The same target again (its first try's result was lost): the same answer, not "same".
    clock.t += 1000;
    expect(await tracker.track(caller, 'retried', 200, 'two\n', 'job:1')).toEqual(first);
    // Another fetch finds it unchanged.
    expect((await tracker.track(caller, 'retried', 200, 'two\n', 'job:2'))!.status).toBe('same');
    expect((await tracker.track(caller, 'retried', 200, 'two\n'))!.status).toBe('same');
    // A retried "same" stays "same", with the time of the fetch before it.
    const same = await tracker.track(caller, 'retried', 200, 'two\n', 'job:3');
    clock.t += 1000;
    expect(await tracker.track(caller, 'retried', 200, 'two\n', 'job:3')).toEqual(same);
  });

  if (backend === 'postgres')
    it('two instances fetching a changed page at once: one finds it changed, the other the same', async () => {
      site.set('e', para('e one'));
      await track(site.url('e'));
      site.set('e', para('e two'));
      const [x, y] = await Promise.all([
        track(site.url('e'), fleet, {}, 0),
        track(site.url('e'), fleet, {}, 1),
      ]);
      expect([x.changes.status, y.changes.status].sort()).toEqual(['changed', 'same']);
    });
});
