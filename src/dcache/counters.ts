import type { TargetStatus } from '../common/job-status';
import type { BatchJobTable } from './schema';

/** What a counter reads of one target row. */
export interface CountedRow {
  status: TargetStatus;
  result: string | null;
  verdict: string | null;
}

/** One of a job's counters: its column and what it is, the sum over the job's targets. */
export interface Counter {
  column: keyof BatchJobTable;
  counts: string;
  of: (t: CountedRow) => number;
}

/**
 * A job's counters, kept by the database as its targets change: every insert or update of a
 * batch_target row moves its job's counters in the same statement, so no code writes them and
 * every reader sees them in step with the rows. Each is the sum over the job's targets of `of`.
 * Besides them the job's `lease` is set to the `updated_at` of any target a statement changes
 * (its status, result, verdict or updated_at).
 *
 * Kept by (the newest migration that defines each):
 *   SQLite      a trigger per row, AFTER INSERT and AFTER UPDATE OF status, result, updated_at,
 *               verdict (0006-cancelled-targets-precise-times.ts)
 *   PostgreSQL  a trigger per statement over its old and new rows, one update per job
 *               (0008-statement-counts.ts, the join planned per statement of more than 64 rows
 *               since 0009-counts-planned-per-statement.ts)
 * test/medium/counters.spec.ts holds each counter, and the lease, to its definition on both.
 */
export const COUNTERS: readonly Counter[] = [
  {
    column: 'targets_done',
    counts: "targets finished: done or failed (the seed's targetsDone)",
    of: (t) => (t.status === 'done' || t.status === 'failed' ? 1 : 0),
  },
  { column: 'targets_failed', counts: 'targets failed', of: (t) => (t.status === 'failed' ? 1 : 0) },
  {
    column: 'targets_cancelled',
    counts: 'targets cancelled (a cancel ended them unfinished)',
    of: (t) => (t.status === 'cancelled' ? 1 : 0),
  },
  {
    column: 'targets_flagged',
    counts: 'done targets whose verdict is not ok',
    of: (t) => (t.status === 'done' && (t.verdict ?? 'ok') !== 'ok' ? 1 : 0),
  },
  {
    column: 'nbytes',
    counts: 'UTF-8 bytes of the stored results',
    of: (t) => (t.result === null ? 0 : Buffer.byteLength(t.result)),
  },
];
