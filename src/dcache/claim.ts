import type { Tx } from './db';
import { lockHosts } from './locks';

/** Pending targets a claim looks at for a job: enough to find some whose host has room. */
const CLAIM_SCAN = 256;

export interface ClaimRequest {
  jobId: string;
  holder: string;
  now: number;
  /** The time in ms: hosts paused until later (a 429/503 with Retry-After) are passed over. */
  nowMs?: number;
  limit: number;
  perHost: number;
}

export interface ClaimedTarget {
  idx: number;
  url: string;
  options: string;
  deferrals: number;
  /** A crawl's target: link hops from the seed. */
  depth: number | null;
}

/**
 * Claims up to `limit` of the job's pending targets for `holder`, lowest idx first: they become
 * running, held by it. A target is passed over while its host already has `perHost` targets
 * running, over all jobs and all instances, or while its host is paused. The update takes only
 * targets still pending, so one cancelled or taken back meanwhile is not claimed.
 *
 * On PostgreSQL there is no cluster-wide lock: candidates are read `FOR UPDATE SKIP LOCKED`, and
 * each of their hosts is locked (an advisory lock per host, in key order) before its running
 * targets are counted, so two claims that add to one host's count follow each other, and the count
 * each reads is exact until it commits. Claims of other hosts, and of other jobs, go on at once.
 * The job's row is taken last, by `stillLive` right before the update (see locks.ts for why that
 * is safe): held from the start, it made every result of the job wait for the whole claim (two
 * instances on one job: 185-194 targets/s against 200 this way, 213-221 before).
 * SQLite has one writer: every host's count is read once.
 *
 * The choice is made here from a few small reads, not in one statement: as one statement (a
 * window over the candidates, joined with the running counts), SQLite spent about 0.4 ms per
 * claim building temporary indexes and b-trees.
 */
export async function claimTargets(
  tx: Tx,
  c: ClaimRequest,
  /** Called before the update; false: nothing is claimed (the job has ended meanwhile). */
  stillLive: () => Promise<boolean> = async () => true,
): Promise<ClaimedTarget[]> {
  const busy = new Map<string, number>();
  if (!tx.pg) {
    const running = await tx.q
      .selectFrom('batch_target')
      .select(['host', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('status', '=', 'running')
      .groupBy('host')
      .execute();
    for (const r of running) busy.set(r.host, Number(r.n));
  }
  const nowMs = c.nowMs ?? c.now * 1000;
  const picked: number[] = [];
  // Most claims find their targets among the first few; a job whose first targets' hosts are
  // busy is looked at further, up to CLAIM_SCAN targets in all.
  let after = -1;
  let scanned = 0;
  for (let page = Math.min(CLAIM_SCAN, c.limit * 2); picked.length < c.limit && scanned < CLAIM_SCAN;) {
    let q = tx.q
      .selectFrom('batch_target')
      .select(['idx', 'host'])
      .where('job_id', '=', c.jobId)
      .where('status', '=', 'pending')
      .where('dup_of', 'is', null)
      .where('idx', '>', after)
      .where('host', 'not in', (eb) =>
        eb.selectFrom('host_state').select('host').where('paused_until', '>', nowMs),
      )
      .orderBy('idx')
      .limit(page);
    if (tx.pg) q = q.forUpdate().skipLocked();
    const rows = await q.execute();
    if (tx.pg) await countRunning(tx, busy, rows);
    for (const r of rows) {
      const n = busy.get(r.host) ?? 0;
      if (n >= c.perHost) continue;
      busy.set(r.host, n + 1);
      picked.push(r.idx);
      if (picked.length >= c.limit) break;
    }
    if (rows.length < page) break;
    after = rows[rows.length - 1].idx;
    scanned += rows.length;
    page = CLAIM_SCAN - scanned;
  }
  if (picked.length === 0 || !(await stillLive())) return [];
  const rows = await tx.q
    .updateTable('batch_target')
    .set({ status: 'running', holder: c.holder, updated_at: c.now })
    .where('job_id', '=', c.jobId)
    .where('status', '=', 'pending')
    .where('idx', 'in', picked)
    .returning(['idx', 'url', 'options', 'deferrals', 'depth'])
    .execute();
  return rows.sort((a, b) => a.idx - b.idx);
}

/** Locks the hosts of these candidates not counted yet, then reads their running counts. */
async function countRunning(tx: Tx, busy: Map<string, number>, rows: { host: string }[]): Promise<void> {
  const fresh = [...new Set(rows.map((r) => r.host))].filter((h) => !busy.has(h));
  if (fresh.length === 0) return;
  await lockHosts(tx, fresh);
  for (const h of fresh) busy.set(h, 0);
  const running = await tx.q
    .selectFrom('batch_target')
    .select(['host', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('status', '=', 'running')
    .where('host', 'in', fresh)
    .groupBy('host')
    .execute();
  for (const r of running) busy.set(r.host, Number(r.n));
}
