import type { Selectable } from 'kysely';
import type { JobStatus, RestartPolicy, TargetStatus } from '../common/job-status';
import type { BatchJobTable, BatchTargetTable } from './schema';

export const ClassFleet = 'fleet';
export const ClassRestricted = 'restricted';

export interface BatchJob {
  id: string;
  caller: string;
  callerClass: string;
  idemKey: string;
  status: JobStatus;
  error: string;
  targetsTotal: number;
  targetsDone: number;
  createdAt: number; // unix seconds (sift's own writers give them to the millisecond, as a fraction)
  lease: number; // unix seconds
  nbytes: number;
  /** Restart policy. Stored as the default (fail) when not given. */
  onRestart?: RestartPolicy;
  /** Fingerprint of the submitting request, for idempotent replays. */
  fingerprint?: string;
  /** How many of targetsDone ended failed. Maintained by the store. */
  targetsFailed?: number;
  /** The job's own TTL (seconds); null or absent: the server's default. */
  ttlS?: number | null;
  /** The job whose failed targets this one fetches again. */
  parentId?: string | null;
  /** Done targets whose verdict is not ok. Maintained by the store. */
  targetsFlagged?: number;
  /** Targets the job's cancel ended before they finished (not in targetsDone). Maintained by the store. */
  targetsCancelled?: number;
  /** batch (the default) or crawl. */
  kind?: string;
  /** A crawl's seed and scope, as JSON (see src/crawl). */
  crawl?: string | null;
  /** A monitor's run: the monitor. */
  monitorId?: string | null;
}

export interface BatchTarget {
  jobId: string;
  idx: number;
  url: string;
  options: string;
  status: TargetStatus;
  result: string | null;
  error: string | null;
  hint: string | null;
  /** Machine-readable error code of a failed target. */
  code?: string | null;
  /** In a retry job: the parent's idx of this target. */
  parentIdx?: number | null;
  /** The earlier target of the job with the same URL and options, whose result this one gets. */
  dupOf?: number | null;
  verdict?: string | null;
  /** A crawl's target: link hops from the seed. */
  depth?: number | null;
  /** A crawl's target: the idx of the page it was found on. */
  foundOn?: number | null;
  /** A crawl's target: its canonical URL. */
  canonical?: string | null;
  /** A crawl's target: the earlier one whose page it is. */
  duplicateOf?: number | null;
}

export interface BatchEvent {
  jobId: string;
  seq: number;
  type: string;
  at: number;
  data: string;
}

export type BatchStoreMisses = Record<
  | 'batchJob'
  | 'batchJobByIdem'
  | 'batchTargets'
  | 'batchTarget'
  | 'updateBatchTarget'
  | 'setBatchJobStatus'
  | 'touchBatchJob',
  number
>;

export const noMisses = (): BatchStoreMisses => ({
  batchJob: 0,
  batchJobByIdem: 0,
  batchTargets: 0,
  batchTarget: 0,
  updateBatchTarget: 0,
  setBatchJobStatus: 0,
  touchBatchJob: 0,
});

// SQLite allows 32,766 bound values per statement; stay well below.
export const INSERT_CHUNK = 500;
export const ID_CHUNK = 500;
/**
 * Rows one update or delete over a whole job changes, at most, between turns of the event loop:
 * on SQLite a statement holds the loop while it runs (2,000 target rows, their trigger and their
 * index entries: a few milliseconds).
 */
export const ROWS_PER_STATEMENT = 2_000;

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function toJob(r: Selectable<BatchJobTable>): BatchJob {
  return {
    id: r.id,
    caller: r.caller,
    callerClass: r.caller_class,
    idemKey: r.idem_key,
    status: r.status,
    error: r.error,
    targetsTotal: r.targets_total,
    targetsDone: r.targets_done,
    createdAt: r.created_at,
    lease: r.lease,
    nbytes: r.nbytes,
    onRestart: r.on_restart,
    fingerprint: r.fingerprint,
    targetsFailed: r.targets_failed,
    ttlS: r.ttl_s,
    parentId: r.parent_id,
    targetsFlagged: r.targets_flagged,
    targetsCancelled: r.targets_cancelled,
    kind: r.kind,
    crawl: r.crawl,
    monitorId: r.monitor_id,
  };
}

export function toTarget(r: Selectable<BatchTargetTable>): BatchTarget {
  return {
    jobId: r.job_id,
    idx: r.idx,
    url: r.url,
    options: r.options,
    status: r.status,
    result: r.result,
    error: r.error,
    hint: r.hint,
    code: r.code,
    parentIdx: r.parent_idx,
    dupOf: r.dup_of,
    verdict: r.verdict,
    depth: r.depth,
    foundOn: r.found_on,
    canonical: r.canonical,
    duplicateOf: r.duplicate_of,
  };
}
