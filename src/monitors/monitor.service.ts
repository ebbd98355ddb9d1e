import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { invalidRequest, notFound, SiftError } from '../common/errors';
import { isLiveJob, MONITOR_EVENTS } from '../common/job-status';
import { BatchReader, Db, MonitorStore, type MonitorRow } from '../dcache';
import { BatchService } from '../batch/batch.service';
import { JobLifecycle, type JobDraft } from '../batch/job-lifecycle';
import { draftCrawl, draftJob, type CrawlRequest } from '../batch/submission';
import { jobView, type JobView } from '../batch/views';
import type { Caller } from '../pages/caller-policy';
import { ProfileService } from '../profiles';
import { monitorView, type MonitorAsk, type MonitorView } from './monitor-views';
import { checkCron, firstSlot, nextSlot, shortestGapS, type Schedule } from './schedule';

/** What POST /v1/monitors asks (CreateMonitorDto checks its shape). */
export interface MonitorRequest {
  name: string;
  urls?: string[];
  crawl?: CrawlRequest;
  schedule?: string;
  every_s?: number;
  options?: object;
  webhook?: { url: string; secret: string };
  notify?: 'changed' | 'always';
}

/** Monitors whose slot has come, started in one tick at most. */
const DUE_PER_TICK = 20;
/** A monitor's runs listed, newest first. */
export const RUNS_LISTED = 100;
/** A crawl's fields that are the monitor's own. */
const MONITOR_OWNED = ['webhook', 'idempotency_key', 'ttl_s', 'on_restart'] as const;

/**
 * Monitors: pages or a crawl read again on a schedule, each run a job of its own (kind
 * monitor_run) whose pages are fetched with "changes" and max_age_s 0 (the site is asked whether
 * the page changed: a 304 sends no body). A run is claimed in the database (MonitorStore.claim),
 * in the transaction that submits it: with several instances each slot's run happens once, and a
 * monitor whose slots passed while no instance ran runs once, at the next tick.
 */
@Injectable()
export class MonitorService {
  private readonly log = new Logger('monitors');
  private ticking = false;

  constructor(
    private readonly store: MonitorStore,
    private readonly db: Db,
    private readonly reader: BatchReader,
    private readonly batch: BatchService,
    private readonly lifecycle: JobLifecycle,
    private readonly profiles: ProfileService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  async create(caller: Caller, req: MonitorRequest): Promise<MonitorView> {
    if ((req.urls === undefined) === (req.crawl === undefined))
      throw invalidRequest(
        'give either urls or crawl',
        'a monitor reads a list of pages, or a crawl of a site',
      );
    if ((req.schedule === undefined) === (req.every_s === undefined))
      throw invalidRequest(
        'give either schedule or every_s',
        'schedule: a cron expression such as "0 * * * *"; every_s: seconds',
      );
    if (req.crawl) {
      const owned = MONITOR_OWNED.find((k) => req.crawl![k] !== undefined);
      if (owned)
        throw invalidRequest(
          `crawl.${owned} is the monitor's own`,
          'leave it out: each run is a job the monitor submits',
        );
      if (req.options) throw invalidRequest('options go in crawl.options for a crawl', 'move them there');
    }
    const schedule: Schedule = req.schedule !== undefined ? { cron: req.schedule } : { everyS: req.every_s! };
    if ('cron' in schedule) checkCron(schedule.cron);
    const now = this.clock.nowMs();
    const limits = this.config.limits[caller.callerClass];
    const gap = shortestGapS(schedule, now);
    if (gap < limits.monitorMinIntervalS)
      throw new SiftError(
        400,
        'invalid_request',
        `runs ${gap} s apart is more often than a ${caller.callerClass} caller's monitor may run (every ${limits.monitorMinIntervalS} s at most)`,
        `schedule runs at least ${limits.monitorMinIntervalS} s apart`,
      );
    const ask: MonitorAsk = req.urls
      ? { urls: req.urls, ...(req.options ? { options: req.options } : {}) }
      : { crawl: req.crawl! };
    // The runs' own rules, checked now: a monitor that could never run is refused at once.
    await this.draftRun(caller, 'check', ask, req.webhook).catch((err: unknown) => {
      throw inMonitorTerms(err, 'urls' in ask);
    });
    if ((await this.store.count(caller)) >= limits.monitors)
      throw new SiftError(
        429,
        'too_many_monitors',
        `${caller.name} has ${limits.monitors} monitors, the most a ${caller.callerClass} caller may`,
        'delete a monitor you no longer need (DELETE /v1/monitors/{id})',
      );
    const row = await this.store.create({
      id: randomUUID(),
      caller: caller.name,
      caller_class: caller.callerClass,
      name: req.name,
      request: JSON.stringify(ask),
      schedule: 'cron' in schedule ? schedule.cron : '',
      every_s: 'everyS' in schedule ? schedule.everyS : 0,
      webhook: req.webhook ? JSON.stringify(req.webhook) : null,
      notify: req.notify ?? 'changed',
      next_at: firstSlot(schedule, now),
      created_at: now,
      updated_at: now,
    });
    return monitorView(row);
  }

  async list(caller: Caller): Promise<MonitorView[]> {
    return (await this.store.list(caller)).map(monitorView);
  }

  async get(caller: Caller, id: string): Promise<MonitorView> {
    return monitorView(await this.own(caller, id));
  }

  /** The monitor's runs, newest first (each a job the batch routes read). */
  async runs(caller: Caller, id: string): Promise<JobView[]> {
    await this.own(caller, id);
    return (await this.store.runs(id, RUNS_LISTED)).map((j) => jobView(j, this.config.batchTtlS));
  }

  async pause(caller: Caller, id: string): Promise<MonitorView> {
    await this.own(caller, id);
    await this.store.setPaused(id, true, this.clock.nowMs());
    return this.get(caller, id);
  }

  /** Runs again from its next slot after now (slots passed while paused are not run). */
  async resume(caller: Caller, id: string): Promise<MonitorView> {
    const m = await this.own(caller, id);
    const now = this.clock.nowMs();
    if (m.paused === 1) await this.store.setPaused(id, false, now, firstSlot(scheduleOf(m), now));
    return this.get(caller, id);
  }

  /** Deletes the monitor; its runs stay, as jobs, until they are swept. */
  async remove(caller: Caller, id: string): Promise<void> {
    await this.own(caller, id);
    await this.store.delete(id);
  }

  private async own(caller: Caller, id: string): Promise<MonitorRow> {
    const m = await this.store.get(caller, id);
    if (!m) throw notFound('monitor');
    return m;
  }

  /**
   * Starts the run of each monitor whose slot has come; a tick that starts while the last one
   * still runs does nothing. Returns the runs it started.
   */
  async tick(): Promise<number> {
    if (this.ticking) return 0;
    this.ticking = true;
    try {
      const now = this.clock.nowMs();
      let started = 0;
      for (const m of await this.store.due(now, DUE_PER_TICK)) if (await this.runDue(m, now)) started++;
      return started;
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Claims the monitor's slot and submits its run in one transaction: the instance whose claim
   * moves the slot submits; the others find it moved. A slot whose run cannot start (the last run
   * still running, a caller's limit) is passed, with why, in last_error.
   */
  private async runDue(m: MonitorRow, now: number): Promise<boolean> {
    const next = nextSlot(scheduleOf(m), m.next_at, now);
    const caller: Caller = { name: m.caller, callerClass: m.caller_class as Caller['callerClass'] };
    let draft: JobDraft | undefined;
    let error: string | null = null;
    try {
      const last = m.last_run_id ? await this.reader.jobs.batchJob(m.last_run_id) : undefined;
      if (last && isLiveJob(last.status)) error = 'the previous run was still running';
      else draft = await this.draftRun(caller, m.id, JSON.parse(m.request) as MonitorAsk, webhookOf(m));
    } catch (err) {
      if (!(err instanceof SiftError)) throw err;
      error = err.message;
    }
    const claim = async (why: string | null, run?: JobDraft) =>
      this.db.transaction(
        async (tx) => {
          if (!(await this.store.claim(tx, m.id, m.next_at, next, now, why))) return false;
          if (!run) return false;
          const { job } = await this.lifecycle.submitIn(tx, run, this.batch.limits(caller));
          await this.store.setLastRun(tx, m.id, job.id);
          return true;
        },
        { durable: true },
      );
    try {
      return await claim(error, draft);
    } catch (err) {
      // A limit at submit (the caller's live jobs): the slot passes, and says why.
      if (!(err instanceof SiftError)) throw err;
      this.log.warn(`monitor ${m.id}: run not started: ${err.message}`);
      return claim(err.message);
    }
  }

  /** A run's job: the pages (or the crawl) with "changes" among their formats, asked of the site again. */
  private async draftRun(
    caller: Caller,
    monitorId: string,
    ask: MonitorAsk,
    webhook: { url: string; secret: string } | undefined,
  ): Promise<JobDraft> {
    const limits = this.batch.draftLimits(caller);
    const hook = webhook && { ...webhook, events: [...MONITOR_EVENTS] };
    const common = { on_restart: 'resume' as const, ...(hook ? { webhook: hook } : {}) };
    const draft =
      'urls' in ask
        ? await draftJob(
            caller,
            { targets: ask.urls.map((url) => ({ url })), options: runOptions(ask.options), ...common },
            limits,
          )
        : draftCrawl(
            caller,
            {
              ...(ask.crawl as CrawlRequest),
              options: runOptions((ask.crawl as CrawlRequest).options),
              ...common,
            },
            limits,
          );
    await this.profiles.checkNamed(caller, [
      runOptions('urls' in ask ? ask.options : (ask.crawl as CrawlRequest).options),
    ]);
    return { ...draft, monitorId };
  }
}

/** A refusal of the runs' targets in the words of the monitor's request: `urls.N` for `targets.N.url`. */
function inMonitorTerms(err: unknown, urls: boolean): unknown {
  if (!urls || !(err instanceof SiftError)) return err;
  const message = err.message.replace(/\btargets\.(\d+)\.url\b/g, 'urls.$1').replace(/\btargets\b/g, 'urls');
  return message === err.message ? err : new SiftError(err.status, err.code, message, err.hint);
}

function scheduleOf(m: MonitorRow): Schedule {
  return m.schedule ? { cron: m.schedule } : { everyS: m.every_s };
}

function webhookOf(m: MonitorRow): { url: string; secret: string } | undefined {
  return m.webhook ? (JSON.parse(m.webhook) as { url: string; secret: string }) : undefined;
}

/** A page's options in a run: "changes" among its formats (content stays as asked), the site asked again. */
export function runOptions(o: object | undefined): object {
  const opts = (o ?? {}) as { format?: string; formats?: string[] };
  const formats = [...new Set([...(opts.formats ?? []), 'changes'])];
  return {
    ...opts,
    ...(opts.formats ? {} : { format: opts.format ?? 'markdown' }),
    formats,
    max_age_s: 0,
  };
}
