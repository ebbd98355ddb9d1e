import { ProfileService } from '../../src/profiles';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BatchService } from '../../src/batch/batch.service';
import { JobSignals } from '../../src/batch/job-signals';
import { Clock } from '../../src/common/clock';
import { loadConfig } from '../../src/config/app-config';
import { openDcache, type Dcache } from '../../src/dcache';
import { lifecycleOf } from '../support/lifecycle';

/**
 * What a caller is told of commits with synchronous = FULL; per-target work stays NORMAL. Read off
 * the statements the database really ran, in order.
 */
describe('acknowledged means durable', () => {
  let d: Dcache;
  let sqlLog: string[];
  let batch: BatchService;
  const caller = { name: 'alice', callerClass: 'fleet' as const };

  beforeEach(async () => {
    sqlLog = [];
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sift-durable-')), 'sift.db');
    d = await openDcache({ path: file, trace: (s) => sqlLog.push(s.trim().toLowerCase()) });
    const clock = new Clock();
    const signals = new JobSignals();
    const config = loadConfig({});
    batch = new BatchService(
      d.reader,
      d.batch,
      d.db,
      lifecycleOf(d, clock, signals).life,
      config,
      clock,
      signals,
      new ProfileService(config, d.profiles, clock),
    );
  });

  afterEach(() => d.close());

  /** The synchronous level in force when the transaction that ran `marker` committed. */
  function levelAtCommitOf(marker: RegExp): string {
    const at = sqlLog.findIndex((s) => marker.test(s));
    expect(at).toBeGreaterThanOrEqual(0);
    const commit = sqlLog.findIndex((s, i) => i > at && s === 'commit');
    let level = 'normal';
    for (let i = 0; i < commit; i++) {
      const m = /^pragma synchronous = (\w+)/.exec(sqlLog[i]);
      if (m) level = m[1];
    }
    return level;
  }

  it('submit commits with FULL before it returns, and the level goes back to NORMAL', async () => {
    const { job } = await batch.submit(caller, { targets: [{ url: 'http://a.test/' }] });
    expect(levelAtCommitOf(/^insert into "batch_job"/)).toBe('full');
    expect(sqlLog[sqlLog.length - 1]).toBe('pragma synchronous = normal');
    expect(d.sqlite!.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(job.status).toBe('queued');
  });

  it('cancel commits with FULL; a target result without the end of the job stays NORMAL', async () => {
    const { job } = await batch.submit(caller, {
      targets: [{ url: 'http://a.test/' }, { url: 'http://b.test/' }],
    });
    sqlLog.length = 0;
    await d.db.transaction(async (tx) => {
      await tx.targets.updateBatchTarget({ jobId: job.id, idx: 0, now: 1, status: 'done', result: '{}' });
    });
    expect(levelAtCommitOf(/^update "batch_target"/)).toBe('normal');
    sqlLog.length = 0;
    await batch.cancel(caller, job.id);
    expect(levelAtCommitOf(/^insert into "batch_event"/)).toBe('full');
  });

  it('a retry job and a purge commit with FULL', async () => {
    const { job } = await batch.submit(caller, { targets: [{ url: 'http://a.test/' }] });
    await d.db.transaction(async (tx) => {
      await tx.targets.updateBatchTarget({
        jobId: job.id,
        idx: 0,
        now: 1,
        status: 'failed',
        error: 'x',
        code: 'connect_error',
      });
      await tx.jobs.setBatchJobStatus({ id: job.id, status: 'failed', now: 1 });
    });
    sqlLog.length = 0;
    const { job: child } = await batch.retry(caller, job.id);
    expect(levelAtCommitOf(/^insert into "batch_job"/)).toBe('full');
    expect(child.parent_id).toBe(job.id);
    sqlLog.length = 0;
    await batch.purge(caller, job.id);
    expect(levelAtCommitOf(/^delete from "batch_job"/)).toBe('full');
  });
});
