import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { SiftError, forbidden, invalidRequest, notFound } from '../common/errors';
import { BatchStore, type BatchEvent, type BatchJob, type BatchTarget } from '../dcache';
import type { Caller, FetchEnvelope } from '../fetch/fetch.service';
import { fingerprintOf } from './canonical';
import { JobSignals } from './job-signals';

export type RestartPolicy = 'fail' | 'retry' | 'resume';
export const TERMINAL_STATUSES = new Set(['done', 'partial', 'failed', 'cancelled']);
export const TERMINAL_EVENTS = new Set(['batch.done', 'batch.partial', 'batch.failed', 'batch.cancelled']);

export interface SubmitTarget {
  url: string;
  options?: object;
}

export interface SubmitRequest {
  targets: SubmitTarget[];
  options?: object;
  on_restart?: RestartPolicy;
  idempotency_key?: string;
}

export interface JobView {
  id: string;
  status: string;
  error: string;
  targets_total: number;
  targets_done: number;
  targets_failed: number;
  created_at: string;
  lease_expires_at: string;
  nbytes: number;
  on_restart: string;
}

export interface TargetResult {
  idx: number;
  url: string;
  status: string;
  result: FetchEnvelope | null;
  error: { code: string; message: string; hint: string } | null;
}

export interface EventView {
  seq: number;
  type: string;
  at: string;
  data: unknown;
}

const iso = (s: number) => new Date(s * 1000).toISOString();

/** Commits a caller is told of survive a power cut (see BatchStore.transaction). */
const DURABLE = { durable: true };

/** A results page stops at about this much JSON; `next` continues. */
export const RESULTS_PAGE_BYTES = 8 * 1024 * 1024;
/** JSON around one stored result: idx, status, keys and escapes. */
const RESULT_OVERHEAD = 256;

/** 400 too_many_targets when a job of `n` targets is over the caller's class limit. */
export function checkTargetCount(maxTargets: number, n: number, caller: Caller): void {
  if (n > maxTargets) {
    throw new SiftError(
      400,
      'too_many_targets',
      `${n} targets is over the ${maxTargets} a ${caller.callerClass} caller may send in one job`,
      `split the list into jobs of at most ${maxTargets} targets`,
    );
  }
}

/** The batch domain: submission rules, idempotency, limits, views, events and cancel. */
@Injectable()
export class BatchService {
  constructor(
    private readonly store: BatchStore,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly signals: JobSignals,
  ) {}

  view(j: BatchJob): JobView {
    return {
      id: j.id,
      status: j.status,
      error: j.error,
      targets_total: j.targetsTotal,
      targets_done: j.targetsDone,
      targets_failed: j.targetsFailed ?? 0,
      created_at: iso(j.createdAt),
      lease_expires_at: iso(j.lease + this.config.batchTtlS),
      nbytes: j.nbytes,
      on_restart: j.onRestart ?? 'fail',
    };
  }

  /**
   * Checks, then commits the job, all its targets and `batch.queued` in one transaction; only then
   * is the job announced (and acknowledged by the caller's 202).
   */
  async submit(
    caller: Caller,
    req: SubmitRequest,
    headerKey?: string,
  ): Promise<{ job: JobView; replayed: boolean }> {
    const limits = this.config.limits[caller.callerClass];
    checkTargetCount(limits.maxTargets, req.targets.length, caller);
    if (headerKey !== undefined && req.idempotency_key !== undefined && headerKey !== req.idempotency_key) {
      throw invalidRequest(
        'the Idempotency-Key header and idempotency_key differ',
        'send the key once, or the same in both',
      );
    }
    const idemKey = headerKey ?? req.idempotency_key ?? '';
    const onRestart = req.on_restart ?? 'fail';
    const defaults = req.options ?? {};
    const targets = req.targets.map((t) => ({ url: t.url, options: { ...defaults, ...(t.options ?? {}) } }));
    if (
      caller.callerClass !== 'fleet' &&
      targets.some((t) => Object.keys((t.options as { headers?: object }).headers ?? {}).length > 0)
    ) {
      throw forbidden(
        'restricted callers may not send custom request headers',
        'remove "headers" from the options',
      );
    }
    const fingerprint = fingerprintOf({
      targets: req.targets,
      options: req.options ?? null,
      on_restart: onRestart,
    });
    const now = this.clock.now();

    const result = await this.store.transaction(async (s) => {
      if (idemKey) {
        const existing = await s.batchJobByIdem(caller.name, idemKey, now, this.config.idemTtlS);
        if (existing) {
          const job = (await s.batchJob(existing))!;
          if (job.fingerprint !== fingerprint) {
            throw new SiftError(
              409,
              'idempotency_conflict',
              `Idempotency-Key "${idemKey}" was used for a different request`,
              'use a new key for a different request, or resend the original body',
            );
          }
          return { job, replayed: true };
        }
      }
      if ((await s.liveBatchJobs(caller.name)) >= limits.maxLiveJobs) {
        throw new SiftError(
          429,
          'too_many_jobs',
          `${caller.name} already has ${limits.maxLiveJobs} live jobs`,
          'wait for a job to finish (or cancel one) and submit again',
          { 'Retry-After': '10' },
        );
      }
      if ((await s.liveBatchJobsTotal()) >= this.config.maxLiveJobs) {
        throw new SiftError(
          503,
          'server_busy',
          'sift is running as many jobs as it may',
          'submit again later',
          {
            'Retry-After': '30',
          },
        );
      }
      const job: BatchJob = {
        id: randomUUID(),
        caller: caller.name,
        callerClass: caller.callerClass,
        idemKey,
        status: 'queued',
        error: '',
        targetsTotal: targets.length,
        targetsDone: 0,
        createdAt: now,
        lease: now,
        nbytes: 0,
        onRestart,
        fingerprint,
      };
      await s.createBatchJob(job);
      await s.putBatchTargets(
        job.id,
        targets.map((t, idx): BatchTarget => ({
          jobId: job.id,
          idx,
          url: t.url,
          options: JSON.stringify(t.options),
          status: 'pending',
          result: null,
          error: null,
          hint: null,
        })),
      );
      await s.appendEvent(job.id, 'batch.queued', now, { targets_total: targets.length });
      return { job: (await s.batchJob(job.id))!, replayed: false };
    }, DURABLE);
    if (!result.replayed) {
      this.signals.submitted(result.job.id);
      this.signals.evented(result.job.id);
    }
    return { job: this.view(result.job), replayed: result.replayed };
  }

  /** The caller's own job (another caller's is not found), its lease touched by the read. */
  async get(caller: Caller, id: string): Promise<JobView> {
    const job = await this.own(caller, id);
    const now = this.clock.now();
    await this.store.touchBatchJob(id, now);
    return this.view({ ...job, lease: now });
  }

  private async own(caller: Caller, id: string): Promise<BatchJob> {
    const job = await this.store.batchJob(id);
    if (!job || job.caller !== caller.name || job.callerClass !== caller.callerClass) throw notFound('job');
    return job;
  }

  async list(
    caller: Caller,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ jobs: JobView[]; next: string | null }> {
    let before: { createdAt: number; id: string } | undefined;
    if (cursor) {
      try {
        const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [
          number,
          string,
        ];
        if (!Number.isInteger(createdAt) || typeof id !== 'string') throw new Error('shape');
        before = { createdAt, id };
      } catch {
        throw invalidRequest(
          'cursor is not one sift gave out',
          'pass the "next" value of the previous page, unchanged',
        );
      }
    }
    const jobs = await this.store.listBatchJobs(caller.name, before, limit + 1);
    const page = jobs.slice(0, limit);
    const last = page[page.length - 1];
    const next =
      jobs.length > limit && last
        ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url')
        : null;
    return { jobs: page.map((j) => this.view(j)), next };
  }

  toResult(t: BatchTarget): TargetResult {
    return {
      idx: t.idx,
      url: t.url,
      status: t.status,
      result: t.result ? (JSON.parse(t.result) as FetchEnvelope) : null,
      error:
        t.status === 'failed'
          ? { code: t.code ?? 'failed', message: t.error ?? '', hint: t.hint ?? '' }
          : null,
    };
  }

  /**
   * A page of results as JSON: `{results, next}`, at most `limit` targets and about
   * RESULTS_PAGE_BYTES of JSON (a larger single result still goes alone). Sizes are read first, so
   * only the targets that fit are loaded; stored envelopes are spliced in, not parsed again.
   */
  async resultsJson(caller: Caller, id: string, after: number, limit: number): Promise<string> {
    const job = await this.own(caller, id);
    let n = 0;
    let total = 0;
    for (const { bytes } of await this.store.batchResultSizes(id, after, limit)) {
      const cost = bytes + RESULT_OVERHEAD;
      if (n > 0 && total + cost > RESULTS_PAGE_BYTES) break;
      total += cost;
      n++;
    }
    const page = n > 0 ? await this.store.batchTargetsPage(id, after, n) : [];
    await this.store.touchBatchJob(id, this.clock.now());
    const last = page[page.length - 1];
    const next = last && last.idx < job.targetsTotal - 1 ? last.idx : null;
    return `{"results":[${page.map((t) => this.resultJson(t)).join(',')}],"next":${next}}`;
  }

  /** One TargetResult as JSON, the stored envelope spliced in. */
  private resultJson(t: BatchTarget): string {
    const { error } = this.toResult({ ...t, result: null });
    const head = JSON.stringify({ idx: t.idx, url: t.url, status: t.status });
    return `${head.slice(0, -1)},"result":${t.result ?? 'null'},"error":${JSON.stringify(error)}}`;
  }

  /** Every result in idx order as NDJSON lines, a page at a time, for streaming in constant memory. */
  async *resultLines(caller: Caller, id: string, pageSize = 100): AsyncGenerator<string> {
    await this.own(caller, id);
    await this.store.touchBatchJob(id, this.clock.now());
    let after = -1;
    for (;;) {
      const page = await this.store.batchTargetsPage(id, after, pageSize);
      for (const t of page) yield `${this.resultJson(t)}\n`;
      if (page.length < pageSize) return;
      after = page[page.length - 1].idx;
    }
  }

  /**
   * A page of the job's events after `after`: at most `limit`, and `next` (the seq to pass as
   * `after`) while more are stored, null at the end.
   */
  async events(
    caller: Caller,
    id: string,
    after: number,
    limit = 1000,
  ): Promise<{ events: EventView[]; next: number | null }> {
    await this.own(caller, id);
    const rows = await this.store.batchEvents(id, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      events: page.map(eventView),
      next: rows.length > limit ? page[page.length - 1].seq : null,
    };
  }

  /** Checks the job is the caller's; touches its lease. */
  /** Opens a stream of the caller's job; true when the job has already ended (no event will follow). */
  async open(caller: Caller, id: string): Promise<boolean> {
    const job = await this.own(caller, id);
    await this.store.touchBatchJob(id, this.clock.now());
    return TERMINAL_STATUSES.has(job.status);
  }

  async exists(id: string): Promise<boolean> {
    return (await this.store.batchJob(id)) !== undefined;
  }

  async eventsAfter(id: string, after: number, limit = 1000): Promise<BatchEvent[]> {
    return this.store.batchEvents(id, after, limit);
  }

  /**
   * One atomic transition to cancelled, with its event; targets in flight go back to pending (their
   * fetches are aborted and any late result is discarded). Cancelling a cancelled job answers the
   * same; a finished one is 409.
   */
  async cancel(caller: Caller, id: string): Promise<JobView> {
    await this.own(caller, id);
    const now = this.clock.now();
    const { job, changed } = await this.store.transaction(async (s) => {
      const j = (await s.batchJob(id))!;
      if (j.status === 'cancelled') return { job: j, changed: false };
      if (TERMINAL_STATUSES.has(j.status)) {
        throw new SiftError(
          409,
          'not_cancellable',
          `the job is already ${j.status}`,
          'nothing to cancel: read its results',
        );
      }
      await s.resetTargets(id, ['running'], now);
      await s.setBatchJobStatus(id, 'cancelled', '', now);
      await s.appendEvent(id, 'batch.cancelled', now, { targets_done: j.targetsDone });
      return { job: (await s.batchJob(id))!, changed: true };
    }, DURABLE);
    if (changed) {
      this.signals.cancelled(id);
      this.signals.evented(id);
    }
    return this.view(job);
  }
}

export function eventView(e: BatchEvent): EventView {
  return { seq: e.seq, type: e.type, at: iso(e.at), data: JSON.parse(e.data) as unknown };
}
