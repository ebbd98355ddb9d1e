import { Injectable } from '@nestjs/common';
import { SizedLru } from '../common/sized-lru';
import type { TimeSlicer } from '../common/time-slice';
import { callerKeyOf, type BatchJob, type Tx, type Webhook } from '../dcache';
import { JobSignals } from './job-signals';
import { finalStatus, terminalEvent, type EventType } from '../common/job-status';
import { iso, jobView } from './views';
import { crawlSpecOf, type CrawlSpec } from '../crawl';

/** What never changes about a job once submitted. */
export interface JobFacts {
  hook: Webhook | undefined;
  dups: boolean;
  /** A crawl's seed and scope; undefined for a batch. */
  crawl?: CrawlSpec;
  /** A monitor's run: the monitor (see transitions/monitor-run.ts). */
  monitorId?: string;
}

/** The NOTIFY channel of job events, payload `type:jobId`. */
export const JOBS_CHANNEL = 'sift_jobs';

/** The one way every transition of the job lifecycle appends an event, with what follows from it. */
@Injectable()
export class JobEvents {
  /**
   * What never changes about a job once it is submitted, read once per job instead of at every
   * event and result: its webhook, and whether any of its targets waits for a duplicate.
   */
  private readonly facts = new SizedLru<JobFacts>(50_000, () => 1);

  constructor(private readonly signals: JobSignals) {}

  /** The job's webhook, whether it has duplicates, and a crawl's spec (see `facts`). */
  async factsOf(tx: Tx, jobId: string): Promise<JobFacts> {
    let f = this.facts.get(jobId);
    if (!f) {
      const job = await tx.jobs.batchJob(jobId);
      f = {
        hook: await tx.deliveries.webhookOf(jobId),
        dups: await tx.targets.hasDuplicates(jobId),
        crawl: crawlSpecOf(job?.crawl),
        monitorId: job?.monitorId ?? undefined,
      };
      this.facts.set(jobId, f);
    }
    return f;
  }

  /**
   * Appends the event; once it is committed, this instance's event streams and runner hear of it,
   * and so do the other instances (a NOTIFY, delivered by PostgreSQL at commit; see ClusterSignals).
   * Returns the job's targets left, as the event's insert read them. `deliver: false` keeps it
   * from the webhook whatever types it takes.
   */
  async append(
    tx: Tx,
    event: { jobId: string; type: EventType; at: number },
    data: object = {},
    deliver = true,
  ): Promise<number> {
    const { jobId, type, at } = event;
    const { seq, left } = await tx.events.appendEvent(
      { jobId, type, at, data },
      { channel: JOBS_CHANNEL, payload: `${type}:${jobId}` },
    );
    tx.onCommit(() => this.signals.evented(jobId));
    // A webhook that takes this type gets the event through the outbox, written with the event.
    const { hook } = await this.factsOf(tx, jobId);
    if (deliver && hook?.events.includes(type)) {
      const job = (await tx.jobs.batchJob(jobId))!;
      // (Jobs are stored with their TTL since webhooks exist: the default given here is never used.)
      const payload = { type, job_id: jobId, seq, at: iso(at), data, job: jobView(job, 0) };
      await tx.deliveries.putDelivery({
        jobId,
        seq,
        type,
        payload: JSON.stringify(payload),
        now: at,
        callerKey: callerKeyOf({ name: job.caller, callerClass: job.callerClass }),
      });
      tx.onCommit(() => this.signals.deliveryQueued(jobId));
    }
    return left;
  }

  /**
   * Events of one job appended together, as `append` appends each (a new job's targets stored
   * failed: a thousand of them were three statements each, over a second on PostgreSQL), in a
   * statement per few hundred events and deliveries, with turns of the event loop by `slicer`.
   */
  async appendAll(
    tx: Tx,
    jobId: string,
    events: { type: EventType; at: number; data: object }[],
    slicer?: TimeSlicer,
  ): Promise<void> {
    if (events.length === 0) return;
    const last = events[events.length - 1].type;
    const seqs = await tx.events.appendEvents(
      jobId,
      events,
      { channel: JOBS_CHANNEL, payload: `${last}:${jobId}` },
      slicer,
    );
    tx.onCommit(() => this.signals.evented(jobId));
    const { hook } = await this.factsOf(tx, jobId);
    const taken = events.flatMap((e, i) => (hook?.events.includes(e.type) ? [{ ...e, seq: seqs[i] }] : []));
    if (taken.length === 0) return;
    const job = (await tx.jobs.batchJob(jobId))!;
    const view = jobView(job, 0);
    await tx.deliveries.putDeliveries(
      jobId,
      callerKeyOf({ name: job.caller, callerClass: job.callerClass }),
      taken.map(({ type, at, data, seq }) => ({
        seq,
        type,
        now: at,
        payload: JSON.stringify({ type, job_id: jobId, seq, at: iso(at), data, job: view }),
      })),
      slicer,
    );
    tx.onCommit(() => this.signals.deliveryQueued(jobId));
  }

  /** The job has no target left: it ends done, partial or failed (finalStatus), with its event. */
  async end(tx: Tx, job: BatchJob, now: number): Promise<BatchJob> {
    const failed = job.targetsFailed ?? 0;
    const status = finalStatus(job.targetsTotal, failed);
    const error = status === 'failed' ? 'every target failed' : '';
    await tx.jobs.setBatchJobStatus({ id: job.id, status, error, now });
    // A monitor's run says what it found before the job's own last event (a stream ends there).
    if (job.monitorId) await this.endMonitorRun(tx, job, job.monitorId, now);
    await this.append(
      tx,
      { jobId: job.id, type: terminalEvent(status), at: now },
      {
        targets_total: job.targetsTotal,
        targets_failed: failed,
      },
    );
    return { ...job, status, error, lease: now };
  }

  /**
   * monitor.run.done: the run's pages, those that changed or went, those that failed. Its webhook
   * gets it when the monitor's notify is always, or when something changed.
   */
  private async endMonitorRun(tx: Tx, job: BatchJob, monitorId: string, now: number): Promise<void> {
    const counts = await tx.events.countTypes(job.id, ['page.changed', 'page.removed']);
    const found = {
      monitor_id: monitorId,
      pages: job.targetsTotal,
      changed: counts['page.changed'],
      removed: counts['page.removed'],
      failed: job.targetsFailed ?? 0,
    };
    const notify = await tx.jobs.monitorNotify(monitorId);
    const deliver = notify === 'always' || found.changed + found.removed > 0;
    await this.append(tx, { jobId: job.id, type: 'monitor.run.done', at: now }, found, deliver);
  }
}
