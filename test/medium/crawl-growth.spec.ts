import { JobSignals } from '../../src/batch/job-signals';
import type { JobDraft, JobLifecycle } from '../../src/batch/job-lifecycle';
import type { PageFindings } from '../../src/crawl';
import type { CrawlSpec } from '../../src/crawl/spec';
import type { Dcache } from '../../src/dcache';
import { describeEachBackend } from '../support/backends';
import { lifecycleOf } from '../support/lifecycle';
import { prng } from '../support/prng';
import { TestClock, waitUntil } from '../support/app';

/**
 * A crawl's growth at the lifecycle, on a bare database: two instances (two connections on
 * PostgreSQL) record pages at once, each offering links that overlap, and the job holds exactly
 * its limit, each canonical URL once, depths one hop from their page.
 */
describeEachBackend('crawl growth', (db) => {
  const clock = new TestClock(5_000_000_000);
  const caller = { name: 'alice', callerClass: 'fleet' as const };
  const limits = { idemTtlS: 3600, callerLiveJobs: 10, totalLiveJobs: 100 };
  const spec = (limit: number, maxDepth = 5): CrawlSpec => ({
    seed: 'http://a.test/',
    limit,
    max_depth: maxDepth,
    include_paths: [],
    exclude_paths: [],
    allow_subdomains: false,
    allow_external: false,
    ignore_query: false,
    sitemap: 'skip',
    options: {},
  });
  const draft = (s: CrawlSpec): JobDraft => ({
    caller,
    idemKey: '',
    fingerprint: 'fp',
    onRestart: 'fail',
    crawl: s,
    targets: [{ url: s.seed, options: '{}', depth: 0, canonical: s.seed }],
  });
  const link = (n: number) => ({ url: `http://a.test/p/${n}#x`, canonical: `http://a.test/p/${n}` });
  let stores: Dcache[] = [];

  afterEach(async () => {
    for (const d of stores) await d.close();
    stores = [];
  });

  /**
   * An instance: its own store and lifecycle on PostgreSQL (a connection of its own); on SQLite,
   * which one process writes, a second lifecycle on the same store.
   */
  async function instance(keep: boolean): Promise<JobLifecycle> {
    if (keep && db.backend === 'sqlite') return lifecycleOf(stores[0], clock, new JobSignals()).life;
    // Two instances take the job's row in turn as fast as they can: with the suite loading both
    // cores, one waited past the default lock timeout (2.5 s). What is tested here is the order
    // of their writes, not how fast a stuck peer is given up on (pg-faults-process tests that).
    const d = await db.open({ file: true, keep, timeoutMs: 30_000 });
    stores.push(d);
    return lifecycleOf(d, clock, new JobSignals()).life;
  }

  /** Claims and records the job's pages until it ends; each page offers `fan` links of the pool. */
  async function work(life: JobLifecycle, jobId: string, holder: string, seed: number, fan: number) {
    const rnd = prng(seed);
    for (;;) {
      // Nothing to claim while the other instance holds the pages whose links come next.
      const claim = await waitUntil(
        async () => {
          const c = await life.claim(jobId, holder, 4);
          return c === undefined ? null : c.targets.length > 0 ? c : undefined;
        },
        () => `${holder} to claim a page of ${jobId}, or the job to end`,
        20_000,
        5,
      );
      if (!claim) return;
      await Promise.all(
        claim.targets.map((t) => {
          const depth = t.depth ?? 0;
          const found: PageFindings = {
            depth,
            digest: `d${t.idx}`,
            links: Array.from({ length: fan }, () => ({
              ...link(Math.floor(rnd() * 120)),
              depth: depth + 1,
              foundOn: t.idx,
            })),
          };
          return life.recordResult({
            jobId,
            idx: t.idx,
            holder,
            outcome: { kind: 'done', result: `{"idx":${t.idx}}` },
            found,
          });
        }),
      );
    }
  }

  it('two instances recording at once: exactly the limit, each canonical URL once, depths one hop down', async () => {
    const one = await instance(false);
    const two = await instance(true);
    for (const limit of [1, 7, 37, 121, 200]) {
      const { job } = await one.submit(draft(spec(limit)), limits);
      await Promise.all([work(one, job.id, 'a', limit, 15), work(two, job.id, 'b', limit + 1, 15)]);
      const d = stores[0];
      const ended = (await d.batch.batchJob(job.id))!;
      const targets = (await d.batch.batchTargets(job.id))!;
      // 120 pages in the pool and the seed: a limit past them holds them all.
      const want = Math.min(limit, 121);
      expect([limit, ended.status, ended.targetsTotal, targets.length]).toEqual([limit, 'done', want, want]);
      expect(new Set(targets.map((t) => t.canonical)).size).toBe(want);
      expect(targets.map((t) => t.idx)).toEqual(targets.map((_, i) => i));
      for (const t of targets.slice(1)) expect(t.depth).toBe(targets[t.foundOn!].depth! + 1);
      const events = await d.reader.events.batchEvents(job.id, 0, 10_000);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((e) => e.type === 'crawl.page')).toHaveLength(want);
    }
  }, 120_000);

  it('a page that landed on a URL the job has, or reads as one of its pages, is a duplicate and adds nothing', async () => {
    const life = await instance(false);
    const { job } = await life.submit(draft(spec(50)), limits);
    const claimed = async () => (await life.claim(job.id, 'a', 10))!.targets;
    const record = (idx: number, found: PageFindings, kind: 'done' | 'failed' = 'done') =>
      life.recordResult({
        jobId: job.id,
        idx,
        holder: 'a',
        outcome:
          kind === 'done'
            ? { kind, result: '{}' }
            : { kind, code: 'connect_error', message: 'reset', hint: 'later' },
        found,
      });
    await claimed();
    const offer = [1, 2, 3, 4].map((n) => ({ ...link(n), depth: 1, foundOn: 0 }));
    await record(0, { depth: 0, digest: 'seed', links: offer });
    await claimed();
    // /p/1 was redirected to the seed; /p/2 has the seed's body; /p/3 failed; each offers links.
    const more = [9, 10].map((n) => ({ ...link(n), depth: 2, foundOn: 1 }));
    await record(1, { depth: 1, landed: 'http://a.test/', digest: 'x', links: more });
    await record(2, { depth: 1, digest: 'seed', links: more });
    await record(3, { depth: 1, links: more }, 'failed');
    // /p/4 was redirected to /p/11, which no link has named yet: /p/11 is then met, never added.
    await record(4, {
      depth: 1,
      landed: 'http://a.test/p/11',
      digest: 'y',
      links: [{ ...link(11), depth: 2, foundOn: 4 }],
    });
    const targets = (await stores[0].batch.batchTargets(job.id))!;
    expect(targets.map((t) => [t.idx, t.status, t.duplicateOf ?? null, t.result])).toEqual([
      [0, 'done', null, '{}'],
      [1, 'done', 0, null],
      [2, 'done', 0, null],
      [3, 'failed', null, null],
      [4, 'done', null, '{}'],
    ]);
    const ended = (await stores[0].batch.batchJob(job.id))!;
    expect([ended.status, ended.targetsTotal]).toEqual(['partial', 5]);
    // A result its holder no longer holds (the job has ended) is not written, nor grows the job.
    expect(await record(0, { depth: 0, links: more })).toBe(false);
    expect((await stores[0].batch.batchJob(job.id))!.targetsTotal).toBe(5);
  });

  it('a page at the last depth adds nothing; a cancelled crawl takes no late page or link', async () => {
    const life = await instance(false);
    const { job } = await life.submit(draft(spec(50, 1)), limits);
    await life.claim(job.id, 'a', 1);
    await life.recordResult({
      jobId: job.id,
      idx: 0,
      holder: 'a',
      outcome: { kind: 'done', result: '{}' },
      found: { depth: 0, links: [1, 2].map((n) => ({ ...link(n), depth: 1, foundOn: 0 })) },
    });
    const claim = (await life.claim(job.id, 'a', 2))!.targets;
    expect(claim.map((t) => t.depth)).toEqual([1, 1]);
    await life.cancel(job.id);
    const late = await life.recordResult({
      jobId: job.id,
      idx: 1,
      holder: 'a',
      outcome: { kind: 'done', result: '{}' },
      found: { depth: 1, links: [5, 6].map((n) => ({ ...link(n), depth: 2, foundOn: 1 })) },
    });
    expect(late).toBe(false);
    const ended = (await stores[0].batch.batchJob(job.id))!;
    expect([ended.status, ended.targetsTotal, ended.targetsCancelled]).toEqual(['cancelled', 3, 2]);
  });
});
