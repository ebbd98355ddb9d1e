import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import type { DeliveryState, JobStatus } from '../common/job-status';
import { Dcache } from '../dcache';
import { InstanceService } from '../cluster/instance.service';

/** The database's figures on /metrics are read at most this often, however often it is scraped. */
export const AGGREGATES_EVERY_MS = 15_000;

/** What /metrics shows of the database: each a query over a whole table. */
export interface Aggregates {
  jobsByStatus: Partial<Record<JobStatus, number>>;
  liveTargetsLeft: number;
  batchBytes: number;
  instances: { id: string; claims: number }[];
  deliveries: Record<DeliveryState, number>;
}

/**
 * The database's figures for /metrics, read lazily: only while someone scrapes, at most once per
 * AGGREGATES_EVERY_MS (counted from the start of the last reading) and never twice at once. A
 * scrape is answered with the last figures read; one that finds them older than the window starts
 * a new reading after its own answer, for the scrapes after it. Only the first scrape, with no
 * figures yet, waits for a reading (one reading, shared by every scrape that comes meanwhile). A
 * scrape thus never puts a full-table query on its path, and a caller that scrapes in a loop
 * costs the database one reading per window, not one per scrape.
 */
@Injectable()
export class MetricsAggregates {
  private readonly log = new Logger('metrics');
  private last?: Aggregates;
  private running?: Promise<Aggregates>;
  private startedAt = Number.NEGATIVE_INFINITY;
  private count = 0;

  constructor(
    private readonly dcache: Dcache,
    private readonly instance: InstanceService,
    private readonly clock: Clock,
  ) {}

  /** How many readings have been made since start-up. */
  get readings(): number {
    return this.count;
  }

  /** The last figures read; the first call waits for the first reading. */
  current(): Promise<Aggregates> {
    const now = this.clock.nowMs();
    if (this.last === undefined) return this.running ?? this.start(now, false);
    if (!this.running && now - this.startedAt >= AGGREGATES_EVERY_MS) {
      this.start(now, true).catch((e: unknown) =>
        this.log.warn(`metrics: the figures could not be read again, the last ones stay: ${String(e)}`),
      );
    }
    return Promise.resolve(this.last);
  }

  /** One reading; `deferred`: after the current scrape has had its answer. */
  private start(now: number, deferred: boolean): Promise<Aggregates> {
    this.startedAt = now;
    const turn = deferred ? new Promise<void>((resolve) => setImmediate(resolve)) : Promise.resolve();
    this.running = turn.then(() => this.read()).finally(() => (this.running = undefined));
    return this.running;
  }

  private async read(): Promise<Aggregates> {
    const reader = this.dcache.reader;
    const { byStatus, liveTargetsLeft } = await reader.jobs.jobCounts();
    const batchBytes = await reader.jobs.batchNbytes();
    const instances = (await this.instance.live()).map((i) => ({ id: i.id, claims: i.claims }));
    const deliveries = await reader.deliveries.deliveryCounts();
    this.count++;
    this.last = { jobsByStatus: byStatus, liveTargetsLeft, batchBytes, instances, deliveries };
    return this.last;
  }
}
