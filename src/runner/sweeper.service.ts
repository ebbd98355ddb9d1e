import '../tuning/luxon';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { endCancelledTargets } from '../batch/transitions/cancel';
import {
  ContentCache,
  Db,
  HistoryStore,
  HostStore,
  SearchStore,
  SWEEP_LOCK,
  evictBatchOldest,
  sweepBatch,
  tryHousekeepingLock,
} from '../dcache';

/** Cancels left unfinished taken up in one pass, at most. */
const CANCELS_PER_TICK = 20;

/**
 * Housekeeping every minute: live leases kept fresh, stale jobs swept, the page cache held to
 * budget, the targets of cancels left unfinished ended, expired robots.txt and idle host state
 * forgotten, pages' histories past their TTL forgotten, documents stored without their words
 * given them (at start too).
 */
@Injectable()
export class SweeperService implements OnApplicationBootstrap {
  private readonly log = new Logger('sweeper');
  private running = false;

  constructor(
    private readonly db: Db,
    private readonly cache: ContentCache,
    private readonly hosts: HostStore,
    private readonly history: HistoryStore,
    private readonly search: SearchStore,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** Documents a database held from before sift worked out their words: indexed from the start. */
  onApplicationBootstrap(): void {
    void this.indexWaiting();
  }

  private async indexWaiting(): Promise<void> {
    try {
      const n = await this.search.indexWaiting();
      if (n > 0) this.log.log(`indexed ${n} stored pages for search`);
    } catch (err) {
      // The next tick tries again.
      this.log.warn(`indexing stored pages for search: ${(err as Error).message}`);
    }
  }

  // Every minute, in UTC. A cron job without a time zone asks Intl for the local one, and luxon (its
  // dates) for the system locale, each mapping about 5 MB of ICU locale data into the process: UTC
  // is a fixed zone, and tuning/luxon.ts gives the locale.
  @Cron(CronExpression.EVERY_MINUTE, { name: 'sweep', timeZone: 'UTC' })
  every(): Promise<unknown> {
    return this.tick();
  }

  /** One pass; a tick that starts while the last one still runs does nothing. */
  async tick(): Promise<{ touched: number; swept: number; evicted: number } | undefined> {
    if (this.running) return undefined;
    this.running = true;
    try {
      // Jobs keep their times to the millisecond (see Clock.preciseNow).
      const now = this.clock.preciseNow();
      // One instance at a time sweeps and evicts (the others find the lock taken and skip a turn).
      const done = await this.db.transaction(async (tx) => {
        if (!(await tryHousekeepingLock(tx, SWEEP_LOCK))) return undefined;
        // Live jobs are never stale: their lease moves with the clock however long they wait.
        const touched = await tx.jobs.touchLiveJobs(now);
        const swept = await sweepBatch(tx, now, this.config.batchTtlS);
        return { touched, swept, evicted: await evictBatchOldest(tx, this.config.batchMaxBytes) };
      });
      if (!done) return undefined;
      const { touched, swept } = done;
      // A cancel whose process ended before its job's targets had all ended cancelled.
      for (const id of await this.db.read.jobs.cancelledUnfinished(CANCELS_PER_TICK)) {
        const ended = await endCancelledTargets(this.db, id, now);
        this.log.log(`ended ${ended} targets of cancelled job ${id}`);
      }
      const evicted = done.evicted + (await this.cache.evict());
      // What sift knew of sites no longer in force: expired robots.txt, hosts with no pause or turn.
      const forgotten = await this.hosts.sweep(this.clock.now(), this.clock.nowMs());
      if (forgotten.robots + forgotten.hosts > 0) {
        this.log.log(`forgot ${forgotten.robots} robots.txt and ${forgotten.hosts} hosts`);
      }
      // Pages' histories no fetch asked changes of for SIFT_HISTORY_TTL_S.
      const forgetBefore = this.clock.nowMs() - this.config.historyTtlS * 1000;
      const versions = await this.history.sweep(forgetBefore);
      if (versions > 0) this.log.log(`forgot ${versions} page versions`);
      // Pages fetched outside a job and not fetched again for as long: no longer found by search.
      const pages = await this.search.sweepFetches(forgetBefore);
      if (pages > 0) this.log.log(`forgot ${pages} fetched pages from the search index`);
      await this.indexWaiting();
      if (swept + evicted > 0) this.log.log(`swept ${swept} jobs, evicted ${evicted}`);
      return { touched, swept, evicted };
    } finally {
      this.running = false;
    }
  }
}
