import type { TargetStatus } from '../../src/common/job-status';
import { COUNTERS, type BatchTarget, type CountedRow, type Dcache } from '../../src/dcache';
import { describeEachBackend } from '../support/backends';

const T0 = 1_700_000_000;
const N = 300;
const STATUSES: TargetStatus[] = ['pending', 'running', 'done', 'failed', 'cancelled'];
const VERDICTS = [null, 'ok', 'empty', 'challenge'];
const RESULTS = [null, '', 'abc', '€€€ é', 'a😀'.repeat(40)];

/** A small deterministic generator: the same writes on both backends, and on every run. */
function prng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

/**
 * The job's counters (src/dcache/counters.ts), each held to its definition, the sum over the
 * job's targets, after every write of a sequence: inserts, updates of one row (a claim, a result)
 * and of many (a cancel's slice, a restart, a retry: over 64 rows, which PostgreSQL's trigger plans
 * for itself), on one connection as a long-lived process uses it. The lease follows the latest
 * change.
 */
describeEachBackend('job counters', (db) => {
  let d: Dcache;
  beforeEach(async () => {
    d = await db.open();
  });
  afterEach(() => d.close());

  const rows = (jobId: string) =>
    d.db.transaction((tx) =>
      tx.q
        .selectFrom('batch_target')
        .select(['status', 'result', 'verdict'])
        .where('job_id', '=', jobId)
        .execute(),
    );
  const jobRow = (jobId: string) =>
    d.db.transaction((tx) =>
      tx.q.selectFrom('batch_job').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow(),
    );

  /** The writes, each followed by `check`. */
  async function writes(jobId: string, check: (step: string, at: number) => Promise<void>) {
    const pick = prng(7);
    await d.batch.createBatchJob({
      id: jobId,
      caller: 'alice',
      callerClass: 'fleet',
      idemKey: '',
      status: 'running',
      error: '',
      targetsTotal: N,
      targetsDone: 0,
      createdAt: T0,
      lease: T0,
      nbytes: 0,
    });
    // Inserted in two statements; some already ended (an invalid URL, a duplicate's copy).
    const inserted: BatchTarget[] = Array.from({ length: N }, (_, idx) => {
      const status = (['pending', 'pending', 'failed', 'done'] as const)[pick(4)];
      return {
        jobId,
        idx,
        url: `http://a.test/${idx}`,
        options: '{}',
        status,
        result: status === 'done' ? RESULTS[pick(RESULTS.length)] : null,
        error: status === 'failed' ? 'invalid' : null,
        hint: null,
        verdict: status === 'done' ? VERDICTS[pick(VERDICTS.length)] : null,
      };
    });
    await d.batch.putBatchTargets(jobId, inserted.slice(0, 100));
    await check('insert of 100', T0);
    await d.batch.putBatchTargets(jobId, inserted.slice(100));
    await check('insert of 200', T0);
    let at = T0;
    const update = async (
      step: string,
      set: Partial<CountedRow>,
      where: { from: number; to: number; status?: TargetStatus },
    ) => {
      at += 1;
      await d.db.transaction(async (tx) => {
        let q = tx.q
          .updateTable('batch_target')
          .set({ ...set, updated_at: at })
          .where('job_id', '=', jobId)
          .where('idx', '>=', where.from)
          .where('idx', '<', where.to);
        if (where.status) q = q.where('status', '=', where.status);
        await q.execute();
      });
      await check(step, at);
    };
    for (let i = 0; i < 40; i++) {
      const idx = pick(N);
      const status = STATUSES[pick(STATUSES.length)];
      await update(
        `one row ${i} → ${status}`,
        {
          status,
          result: status === 'done' ? RESULTS[pick(RESULTS.length)] : null,
          verdict: status === 'done' ? VERDICTS[pick(VERDICTS.length)] : null,
        },
        { from: idx, to: idx + 1 },
      );
    }
    await update(
      'a cancel of what is unfinished',
      { status: 'cancelled' },
      { from: 0, to: N, status: 'pending' },
    );
    await update('a restart', { status: 'pending', result: null, verdict: null }, { from: 0, to: 200 });
    await update(
      'results for many',
      { status: 'done', result: 'x'.repeat(50), verdict: 'empty' },
      { from: 50, to: 250 },
    );
    await update('a verdict changes alone', { verdict: 'ok' }, { from: 100, to: 180 });
    for (let i = 0; i < 20; i++) {
      const from = pick(N);
      const status = STATUSES[pick(STATUSES.length)];
      await update(
        `rows ${from}.. → ${status}`,
        { status, result: status === 'done' ? 'yz' : null },
        {
          from,
          to: from + 1 + pick(120),
        },
      );
    }
  }

  it.each(COUNTERS.map((c) => [c.column, c.counts, c] as const))(
    '%s: %s',
    async (_column, _counts, counter) => {
      const seen: [string, number, number][] = [];
      await writes('j1', async (step) => {
        const want = (await rows('j1')).reduce((n, t) => n + counter.of(t), 0);
        seen.push([step, Number((await jobRow('j1'))[counter.column]), want]);
      });
      expect(seen.filter(([, got, want]) => got !== want)).toEqual([]);
      // The writes move this counter, so holding it proves something.
      expect(new Set(seen.map(([, , want]) => want)).size).toBeGreaterThan(3);
    },
  );

  it('lease: the updated_at of the latest change of a target', async () => {
    const seen: [string, number, number][] = [];
    await writes('j1', async (step, at) => {
      seen.push([step, Number((await jobRow('j1')).lease), at]);
    });
    expect(seen.filter(([, got, want]) => got !== want)).toEqual([]);
  });
});
