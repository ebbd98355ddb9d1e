import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { notFound } from '../common/errors';
import { BatchReader, BatchStore, Db, type BatchEvent, type BatchJob, type TargetFilter } from '../dcache';
import type { Caller } from '../pages/caller-policy';
import { JobLifecycle, type JobDraft, type SubmitLimits } from './job-lifecycle';
import { JobSignals } from './job-signals';
import { optionRulesOf } from '../pages/caller-policy';
import { ProfileService } from '../profiles';
import { draftCrawl, draftJob, type CrawlRequest, type DraftLimits, type SubmitRequest } from './submission';

import { PENDING_DELIVERIES } from './job-creation';
import { crawlSpecOf, type CrawlSpec } from '../crawl';
import { isTerminalJob, type JobStatus } from '../common/job-status';
import { readResults, resultLines } from './result-lines';
import {
  decodeJobCursor,
  deliveryView,
  encodeJobCursor,
  eventView,
  jobView,
  type DeliveryView,
  type EventView,
  type JobView,
  type WebhookView,
} from './views';

/** A results page stops at about this much JSON; `next` continues. */
export const RESULTS_PAGE_BYTES = 8 * 1024 * 1024;
/** JSON around one stored result: idx, status, keys and escapes. */
const RESULT_OVERHEAD = 256;

/**
 * The batch API's domain: submission rules, reads of jobs, results and events for their own caller.
 * Every change of state goes through the JobLifecycle.
 */
@Injectable()
export class BatchService {
  private readonly log = new Logger('batch');

  constructor(
    /** Reads: jobs, results, events, deliveries. */
    private readonly reader: BatchReader,
    /** The seed's store: the touch after a read. */
    private readonly store: BatchStore,
    private readonly db: Db,
    private readonly lifecycle: JobLifecycle,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly signals: JobSignals,
    private readonly profiles: ProfileService,
  ) {}

  private view(j: BatchJob): JobView {
    return jobView(j, this.config.batchTtlS);
  }

  /** Checks the request, then hands it to the lifecycle; the 202 follows a durable commit. */
  async submit(
    caller: Caller,
    req: SubmitRequest,
    headerKey?: string,
  ): Promise<{ job: JobView; replayed: boolean }> {
    const draft = await draftJob(caller, req, this.draftLimits(caller, headerKey));
    await this.profiles.checkNamed(caller, [req.options, ...req.targets.map((t) => t.options)]);
    return this.submitDraft(caller, draft);
  }

  /** A crawl: a job of its seed that grows as its pages are read (see src/crawl/index.ts). */
  async submitCrawl(
    caller: Caller,
    req: CrawlRequest,
    headerKey?: string,
    /** A job of kind llmstxt: its pages make the site's llms.txt files (llms-txt.service.ts). */
    llms?: { full: boolean },
  ): Promise<{ job: JobView; replayed: boolean }> {
    const draft = draftCrawl(caller, req, this.draftLimits(caller, headerKey), llms);
    await this.profiles.checkNamed(caller, [req.options]);
    return this.submitDraft(caller, draft);
  }

  /** What a job of the caller's may ask (submission.ts's limits). */
  draftLimits(caller: Caller, headerKey?: string): DraftLimits {
    return {
      headerKey,
      maxTargets: this.config.limits[caller.callerClass].maxTargets,
      maxTtlS: this.config.batchMaxTtlS,
      rules: optionRulesOf(this.config),
      defaultTtlS: this.config.batchTtlS,
    };
  }

  private async submitDraft(caller: Caller, draft: JobDraft): Promise<{ job: JobView; replayed: boolean }> {
    const { job, replayed } = await this.lifecycle.submit(draft, this.limits(caller));
    // A job that ended at submit (every target invalid) stored its rows with no runner after
    // it: the byte budget is held here, as after the runner's writes.
    // The job is committed whatever eviction does: a failure there is logged, the answer stands.
    if (!replayed && isTerminalJob(job.status)) {
      await this.store
        .evictBatchOldest(this.config.batchMaxBytes)
        .catch((err: Error) => this.log.error(`evicting batch jobs failed: ${err.message}`));
    }
    return { job: this.view(job), replayed };
  }

  /** The caller's live-job and delivery limits at submit. */
  limits(caller: Caller): SubmitLimits {
    return {
      idemTtlS: this.config.idemTtlS,
      callerLiveJobs: this.config.limits[caller.callerClass].maxLiveJobs,
      totalLiveJobs: this.config.maxLiveJobs,
      pendingDeliveries: PENDING_DELIVERIES[caller.callerClass],
    };
  }

  /** A new job of the caller's ended job's failed targets (see JobLifecycle.retry). */
  async retry(caller: Caller, id: string, idemKey?: string): Promise<{ job: JobView; replayed: boolean }> {
    await this.own(caller, id);
    const out = await this.lifecycle.retry(id, caller, idemKey ?? '', this.limits(caller));
    if (!out) throw notFound('job');
    return { job: this.view(out.job), replayed: out.replayed };
  }

  /** Deletes the caller's ended job and everything of it (see JobLifecycle.purge). */
  async purge(caller: Caller, id: string): Promise<void> {
    await this.own(caller, id);
    if (!(await this.lifecycle.purge(id))) throw notFound('job');
  }

  /** The job's webhook (without its secret) and a page of its deliveries after seq `after`. */
  async deliveries(
    caller: Caller,
    id: string,
    after: number,
    limit: number,
  ): Promise<{ webhook: WebhookView | null; deliveries: DeliveryView[]; next: number | null }> {
    await this.own(caller, id);
    const hook = await this.reader.deliveries.webhookOf(id);
    const rows = await this.reader.deliveries.deliveries(id, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      webhook: hook ? { url: hook.url, events: hook.events } : null,
      deliveries: page.map(deliveryView),
      next: rows.length > limit ? page[page.length - 1].seq : null,
    };
  }

  /** Sends the job's deliveries that are not delivered (every one with `all`) again, from now. */
  async redeliver(caller: Caller, id: string, all: boolean): Promise<{ queued: number }> {
    await this.own(caller, id);
    const now = this.clock.preciseNow();
    const queued = await this.db.transaction((tx) => tx.deliveries.redeliver(id, now, all));
    if (queued > 0) this.signals.deliveryQueued(id);
    return { queued };
  }

  /** The caller's own job (another caller's is not found), its lease touched by the read. */
  async get(caller: Caller, id: string): Promise<JobView> {
    const job = await this.own(caller, id);
    const now = this.clock.preciseNow();
    await this.store.touchBatchJob(id, now);
    return this.view({ ...job, lease: now });
  }

  /** What the caller's crawl was asked (undefined for a batch). */
  async crawlSpec(caller: Caller, id: string): Promise<CrawlSpec | undefined> {
    return crawlSpecOf((await this.own(caller, id)).crawl);
  }

  private async own(caller: Caller, id: string): Promise<BatchJob> {
    const job = await this.reader.jobs.batchJob(id);
    if (!job || job.caller !== caller.name || job.callerClass !== caller.callerClass) throw notFound('job');
    return job;
  }

  /** A page of the caller's jobs, newest first, after the `next` of the last page (`after`). */
  async list(
    caller: Caller,
    page: { after?: string; limit: number; statuses?: readonly JobStatus[] },
  ): Promise<{ jobs: JobView[]; next: string | null }> {
    const { after, limit, statuses } = page;
    const before = after ? decodeJobCursor(after) : undefined;
    const jobs = await this.reader.jobs.listBatchJobs(caller, before, limit + 1, statuses);
    const shown = jobs.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      jobs: shown.map((j) => this.view(j)),
      next: jobs.length > limit && last ? encodeJobCursor(last) : null,
    };
  }

  /**
   * A page of results: at most `limit` targets and about RESULTS_PAGE_BYTES of JSON (a larger
   * single result still goes alone), each as its TargetResult JSON, in groups read a slice at a
   * time (see readResults); `next` to continue, null at the end. Sizes are read first, so only
   * the targets that fit are loaded; stored envelopes are spliced in, not parsed again.
   */
  async resultsPage(
    caller: Caller,
    id: string,
    range: { after: number; limit: number } & TargetFilter,
  ): Promise<{ groups: string[][]; next: number | null }> {
    const { after, limit, ...filter } = range;
    await this.own(caller, id);
    let n = 0;
    let total = 0;
    // One more than asked: whether a next page exists is known without guessing.
    const sizes = await this.reader.targets.batchResultSizes(id, after, limit + 1, filter);
    for (const { bytes } of sizes.slice(0, limit)) {
      const cost = bytes + RESULT_OVERHEAD;
      if (n > 0 && total + cost > RESULTS_PAGE_BYTES) break;
      total += cost;
      n++;
    }
    const { groups, last } = await readResults(this.reader, id, { after, filter }, sizes.slice(0, n));
    await this.store.touchBatchJob(id, this.clock.preciseNow());
    return { groups, next: last !== undefined && sizes.length > n ? last : null };
  }

  /** A page of results (see resultsPage) as one JSON text: `{results, next}`. */
  async resultsJson(
    caller: Caller,
    id: string,
    range: { after: number; limit: number } & TargetFilter,
  ): Promise<string> {
    const { groups, next } = await this.resultsPage(caller, id, range);
    return `{"results":[${groups.flat().join(',')}],"next":${next}}`;
  }

  /**
   * Every result in idx order as NDJSON lines, read a page at a time for streaming in constant
   * memory (see resultLines in result-lines.ts: as they stand, or with `follow` as each ends).
   */
  async *resultLines(
    caller: Caller,
    id: string,
    filter: TargetFilter,
    opts: { follow?: boolean; stop?: AbortSignal } = {},
  ): AsyncGenerator<string> {
    await this.own(caller, id);
    await this.store.touchBatchJob(id, this.clock.preciseNow());
    yield* resultLines({ reader: this.reader, signals: this.signals }, id, filter, opts);
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
    const rows = await this.reader.events.batchEvents(id, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      events: page.map(eventView),
      next: rows.length > limit ? page[page.length - 1].seq : null,
    };
  }

  /** Opens a stream of the caller's job; true when the job has already ended (no event will follow). */
  async open(caller: Caller, id: string): Promise<boolean> {
    const job = await this.own(caller, id);
    await this.store.touchBatchJob(id, this.clock.preciseNow());
    return isTerminalJob(job.status);
  }

  async exists(id: string): Promise<boolean> {
    return (await this.reader.jobs.batchJob(id)) !== undefined;
  }

  async eventsAfter(id: string, after: number, limit = 1000): Promise<BatchEvent[]> {
    return this.reader.events.batchEvents(id, after, limit);
  }

  /** Cancels the caller's job (see JobLifecycle.cancel). */
  async cancel(caller: Caller, id: string): Promise<JobView> {
    await this.own(caller, id);
    const out = await this.lifecycle.cancel(id);
    if (!out) throw notFound('job');
    return this.view(out.job);
  }
}
