import { randomUUID } from 'node:crypto';
import { SiftError } from '../common/errors';
import { callerKeyOf, type BatchJob, type BatchTarget, type Tx, type Webhook } from '../dcache';
import type { CallerClass } from '../config/app-config';
import type { Caller } from '../pages/caller-policy';
import { markDuplicatesInSlices } from './dedupe';
import { TimeSlicer } from '../common/time-slice';
import type { JobEvents } from './job-events';
import { DEFAULT_RESTART_POLICY, isLiveJob, type RestartPolicy } from '../common/job-status';
import type { CrawlSpec } from '../crawl';

/** The code of a target whose URL is not an absolute http(s) URL (kept under ignore_invalid_urls). */
export const INVALID_URL = 'invalid_url';

/** A target as a job stores it. */
export interface DraftTarget {
  url: string;
  /** Its fetch options, as stored (JSON). */
  options: string;
  /** In a retry job: the parent's idx of this target. */
  parentIdx?: number;
  /** An earlier target with the same URL and options: this one gets its result. */
  dupOf?: number;
  /** Stored failed at once (an invalid URL under ignore_invalid_urls). */
  failed?: { code: string; message: string; hint: string };
  /** A crawl's seed: link hops (0) and its canonical URL. */
  depth?: number;
  canonical?: string;
}

export interface JobDraft {
  caller: Caller;
  idemKey: string;
  fingerprint: string;
  onRestart: RestartPolicy;
  targets: DraftTarget[];
  /** The job's own TTL in seconds (null: the server's default). */
  ttlS?: number | null;
  parentId?: string;
  webhook?: Webhook;
  /** A crawl: what it was asked. */
  crawl?: CrawlSpec;
  /** A monitor's run: the monitor. */
  monitorId?: string;
}

export interface SubmitLimits {
  idemTtlS: number;
  /** Live jobs one caller may have. */
  callerLiveJobs: number;
  /** Live jobs of all callers together. */
  totalLiveJobs: number;
  /** Webhook deliveries one caller may have pending when it submits a job with a webhook (no cap if not given). */
  pendingDeliveries?: number;
}

/**
 * Webhook deliveries a caller may have waiting (pending) and still submit a job with a webhook.
 * Past it the submit is 429: the receiver is not keeping up, and nothing queued is dropped. Events
 * of jobs already accepted are still queued, so a caller's pending deliveries stay under this plus
 * what its live jobs can add (targets + 3 each).
 */
export const PENDING_DELIVERIES: Record<CallerClass, number> = { fleet: 100_000, restricted: 5_000 };

/**
 * What a target's rows hold beside the URL, options and error text: the row, its event and
 * their index entries. With those texts it makes the job's row_bytes, which the byte budget
 * counts, so a job stores nothing the budget does not see (one of only invalid URLs included).
 */
const TARGET_ROW_BYTES = 256;

/** The bytes a target's rows and their events hold (its deliveries add theirs as written). */
function rowBytes(t: DraftTarget): number {
  let n = TARGET_ROW_BYTES + Buffer.byteLength(t.url) + Buffer.byteLength(t.options);
  if (t.failed)
    n += Buffer.byteLength(t.failed.message) + Buffer.byteLength(t.failed.hint) + t.failed.code.length;
  return n;
}

/**
 * The job's target rows and the bytes they hold, a slice at a time: over 10,000 targets the
 * two passes held the event loop for several milliseconds inside the submit's transaction.
 */
async function targetRows(
  jobId: string,
  targets: DraftTarget[],
  slicer: TimeSlicer,
): Promise<{ rows: BatchTarget[]; bytes: number }> {
  const rows = new Array<BatchTarget>(targets.length);
  let bytes = 0;
  for (let idx = 0; idx < targets.length; idx++) {
    const t = targets[idx];
    bytes += rowBytes(t);
    rows[idx] = {
      jobId,
      idx,
      url: t.url,
      options: t.options,
      status: t.failed ? 'failed' : 'pending',
      result: null,
      error: t.failed?.message ?? null,
      hint: t.failed?.hint ?? null,
      code: t.failed?.code ?? null,
      parentIdx: t.parentIdx ?? null,
      dupOf: t.dupOf ?? null,
      depth: t.depth ?? null,
      canonical: t.canonical ?? null,
    };
    if (slicer.due()) await slicer.turn();
  }
  return { rows, bytes };
}

/** The job an idempotency key was first used for; 409 when it was for another request. */
export async function replayOf(
  tx: Tx,
  ask: { caller: Caller; idemKey: string; fingerprint: string },
  limits: SubmitLimits,
  now: number,
): Promise<BatchJob | undefined> {
  const { caller, idemKey, fingerprint } = ask;
  if (!idemKey) return undefined;
  // The caller's own key: the same name with another class is another caller.
  const existing = await tx.jobs.batchJobByIdem(caller, idemKey, now, limits.idemTtlS);
  if (!existing) return undefined;
  const job = (await tx.jobs.batchJob(existing))!;
  if (job.fingerprint !== fingerprint) {
    throw new SiftError(
      409,
      'idempotency_conflict',
      `Idempotency-Key "${idemKey}" was used for a different request`,
      'use a new key for a different request, or resend the original body',
    );
  }
  return job;
}

/** 429 too_many_jobs past the caller's live-job limit, 503 server_busy past everyone's. */
export async function checkLiveJobs(tx: Tx, caller: Caller, limits: SubmitLimits): Promise<void> {
  if ((await tx.jobs.liveBatchJobs(caller)) >= limits.callerLiveJobs) {
    throw new SiftError(
      429,
      'too_many_jobs',
      `${caller.name} already has ${limits.callerLiveJobs} live jobs`,
      'wait for a job to finish (or cancel one) and submit again',
    ).retryAfter(10);
  }
  if ((await tx.jobs.liveBatchJobsTotal()) >= limits.totalLiveJobs) {
    throw new SiftError(
      503,
      'server_busy',
      'sift is running as many jobs as it may',
      'submit again later',
    ).retryAfter(30);
  }
}

/** The live-job limits (checkLiveJobs), then, for a job with a webhook, the pending deliveries'. */
export async function checkCallerLimits(tx: Tx, draft: JobDraft, limits: SubmitLimits): Promise<void> {
  await checkLiveJobs(tx, draft.caller, limits);
  const cap = limits.pendingDeliveries;
  if (!draft.webhook || cap === undefined) return;
  if ((await tx.deliveries.pendingOf(callerKeyOf(draft.caller), cap)) >= cap) {
    throw new SiftError(
      429,
      'too_many_requests',
      `${draft.caller.name} has ${cap} webhook deliveries waiting, the most a ${draft.caller.callerClass} caller may`,
      'let the receiver catch up (GET /v1/batch/{id}/deliveries shows why they wait), purge ended jobs, or submit without a webhook',
    ).retryAfter(60);
  }
}

/**
 * Writes the job, its webhook, its targets and `batch.queued` (with a `target.failed` for each
 * target stored failed); a job whose every target is failed already ends at once.
 */
export async function createJob(tx: Tx, events: JobEvents, draft: JobDraft, now: number): Promise<BatchJob> {
  const id = randomUUID();
  // On SQLite the whole transaction was one task (10,000 targets: over 100 ms): it gives the
  // event loop its turns as it goes, while other queries wait for the connection.
  const slicer = new TimeSlicer();
  const { rows, bytes } = await targetRows(id, draft.targets, slicer);
  await tx.jobs.createBatchJob(
    {
      id,
      caller: draft.caller.name,
      callerClass: draft.caller.callerClass,
      idemKey: draft.idemKey,
      status: 'queued',
      error: '',
      targetsTotal: draft.targets.length,
      targetsDone: 0,
      createdAt: now,
      lease: now,
      nbytes: 0,
      onRestart: draft.onRestart,
      fingerprint: draft.fingerprint,
      ttlS: draft.ttlS ?? null,
      parentId: draft.parentId ?? null,
      kind: draft.monitorId
        ? 'monitor_run'
        : draft.crawl?.llms_files
          ? 'llmstxt'
          : draft.crawl
            ? 'crawl'
            : 'batch',
      crawl: draft.crawl ? JSON.stringify(draft.crawl) : null,
      monitorId: draft.monitorId ?? null,
    },
    bytes,
  );
  if (draft.webhook) await tx.deliveries.putWebhook(id, draft.webhook);
  await tx.targets.putBatchTargets(id, rows, slicer);
  for (const [idx, t] of draft.targets.entries()) if (t.canonical) await tx.crawls.note(id, t.canonical, idx);
  await events.append(
    tx,
    { jobId: id, type: 'batch.queued', at: now },
    { targets_total: draft.targets.length },
  );
  const failed = draft.targets.flatMap((t, idx) =>
    t.failed ? [{ type: 'target.failed' as const, at: now, data: { idx, code: t.failed.code } }] : [],
  );
  await events.appendAll(tx, id, failed, slicer);
  const job = (await tx.jobs.batchJob(id))!;
  return job.targetsDone >= job.targetsTotal ? events.end(tx, job, now) : job;
}

/**
 * The draft of a job of the parent's failed and cancelled targets (same URL and options; each
 * knows its parent_idx), with the parent's restart policy, TTL and webhook; the parent is only
 * read. 409 not_retryable while the parent is live or when none of its targets failed or was
 * cancelled (an invalid URL does not count: fetching it again cannot help). Undefined when the
 * parent does not exist.
 */
export async function retryDraft(
  tx: Tx,
  parentId: string,
  ask: { caller: Caller; idemKey: string; fingerprint: string },
): Promise<JobDraft | undefined> {
  const { caller, idemKey, fingerprint } = ask;
  const parent = await tx.jobs.batchJob(parentId);
  if (!parent) return undefined;
  if (isLiveJob(parent.status)) {
    throw new SiftError(
      409,
      'not_retryable',
      `the job is still ${parent.status}`,
      'wait for it to end (or cancel it), then retry its failed and cancelled targets',
    );
  }
  const again = (await tx.targets.retryableTargets(parentId)).filter((t) => t.code !== INVALID_URL);
  if (again.length === 0) {
    throw new SiftError(
      409,
      'not_retryable',
      "none of the job's targets failed or was cancelled (invalid URLs are not retried)",
      'nothing to retry: read its results',
    );
  }
  return {
    caller,
    idemKey,
    fingerprint,
    onRestart: parent.onRestart ?? DEFAULT_RESTART_POLICY,
    ttlS: parent.ttlS ?? null,
    parentId,
    webhook: await tx.deliveries.webhookOf(parentId),
    targets: await markDuplicatesInSlices(
      again.map((t) => ({ url: t.url, options: t.options, parentIdx: t.idx })),
      new TimeSlicer(),
    ),
  };
}
