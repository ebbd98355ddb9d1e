import { Clock } from '../../src/common/clock';
import type { Dcache } from '../../src/dcache';
import { AddressPolicy } from '../../src/fetch/address-policy';
import { Fetcher } from '../../src/fetch/fetcher';
import { Robots } from '../../src/fetch/robots';
import { describeEachBackend } from '../support/backends';

/**
 * What sift keeps per site has a bound and a sweep, a Crawl-delay turn is taken by one request at
 * a time, and a DNS failure of one caller is not kept for the site (SPEC "Safe under a hostile
 * caller").
 */
describeEachBackend('per-site state', (testDb) => {
  let d: Dcache;
  beforeEach(async () => {
    d = await testDb.open();
  });
  afterEach(() => d.close());

  const robotsRow = (origin: string, expires_at: number) => ({
    origin,
    kind: 'rules' as const,
    status: 200,
    body: 'User-agent: *\nDisallow: /x\n',
    fetched_at: expires_at - 86400,
    expires_at,
  });

  it('sweep: expired robots.txt rows and idle hosts go, what is still in force stays', async () => {
    const nowS = 1_700_000_000;
    const nowMs = nowS * 1000;
    for (let i = 0; i < 50; i++) await d.hosts.putRobots(robotsRow(`http://old${i}.test`, nowS - 1));
    await d.hosts.putRobots(robotsRow('http://fresh.test', nowS + 60));
    for (let i = 0; i < 50; i++) await d.hosts.pauseHost(`idle${i}.test`, nowMs - 1000);
    await d.hosts.pauseHost('paused.test', nowMs + 60_000);
    expect(await d.hosts.takeTurn('turn.test', 30_000, nowMs)).toBeUndefined();

    expect(await d.hosts.sweep(nowS, nowMs)).toEqual({ robots: 50, hosts: 50 });
    expect(await d.kysely.selectFrom('robots_txt').select('origin').execute()).toEqual([
      { origin: 'http://fresh.test' },
    ]);
    const left = await d.kysely.selectFrom('host_state').select('host').orderBy('host').execute();
    expect(left.map((r) => r.host)).toEqual(['paused.test', 'turn.test']);
    // Once the pause and the turn are over, they go too.
    expect(await d.hosts.sweep(nowS + 61, nowMs + 61_000)).toEqual({ robots: 1, hosts: 2 });
  });

  it('sweep: past the byte bound, the robots.txt fetched longest ago go first', async () => {
    const nowS = 1_700_000_000;
    for (let i = 0; i < 10; i++) {
      await d.hosts.putRobots({
        ...robotsRow(`http://o${i}.test`, nowS + 3600),
        body: 'x'.repeat(1000),
        fetched_at: nowS - 100 + i,
      });
    }
    expect(await d.hosts.sweep(nowS, nowS * 1000, 4500)).toEqual({ robots: 6, hosts: 0 });
    const left = await d.kysely.selectFrom('robots_txt').select('origin').orderBy('origin').execute();
    expect(left.map((r) => r.origin)).toEqual([
      'http://o6.test',
      'http://o7.test',
      'http://o8.test',
      'http://o9.test',
    ]);
  });

  it('takeTurn: of requests asking at once, one takes the turn; the others learn when the next is due', async () => {
    const nowMs = 1_700_000_000_000;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => d.hosts.takeTurn('h.test', 1000, nowMs)),
    );
    expect(answers.filter((a) => a === undefined)).toHaveLength(1);
    expect(answers.filter((a) => a === nowMs + 1000)).toHaveLength(7);
    // Asking again before it is due takes nothing and moves nothing.
    expect(await d.hosts.takeTurn('h.test', 1000, nowMs + 500)).toBe(nowMs + 1000);
    expect(await d.hosts.takeTurn('h.test', 1000, nowMs + 1000)).toBeUndefined();
    expect(await d.hosts.takeTurn('h.test', 1000, nowMs + 1500)).toBe(nowMs + 2000);
  });

  it("a robots.txt whose name does not resolve fails that caller's fetch and is not stored for the site", async () => {
    let lookups = 0;
    const fetcher = new Fetcher({
      policy: new AddressPolicy([]),
      resolver: async (host) => {
        lookups++;
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
    });
    const robots = new Robots(fetcher, d.hosts, new Clock(), 'sift');
    try {
      await expect(robots.check(new URL('http://gone.test/page'), 'fleet', 'fleet:a')).rejects.toMatchObject({
        code: 'dns_error',
      });
      expect(await d.hosts.robots('fleet http://gone.test')).toBeUndefined();
      expect(await d.kysely.selectFrom('robots_txt').selectAll().execute()).toEqual([]);
      // The next caller asks again rather than being told the first one's failure.
      await expect(robots.check(new URL('http://gone.test/other'), 'fleet', 'fleet:b')).rejects.toMatchObject(
        {
          code: 'dns_error',
        },
      );
      expect(lookups).toBe(2);
    } finally {
      await fetcher.close();
    }
  });
});
