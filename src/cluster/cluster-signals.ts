import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Dcache } from '../dcache';
import { JOBS_CHANNEL } from '../batch/job-events';
import { JobSignals } from '../batch/job-signals';

/**
 * Job news from the other instances on a shared PostgreSQL database: every event committed
 * anywhere arrives as a NOTIFY and becomes the same in-process signal a local commit sends, so a
 * cancel on one instance aborts the fetches of all, and an event stream on any instance sees the
 * events of all. A notification missed (a lost connection) is covered by the runner's and the
 * streams' polls. On SQLite there is one process, and nothing to do.
 */
@Injectable()
export class ClusterSignals implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('cluster');
  private stop?: () => Promise<void>;

  constructor(
    private readonly dcache: Dcache,
    private readonly signals: JobSignals,
  ) {}

  async onModuleInit(): Promise<void> {
    this.stop = await this.dcache.listen(JOBS_CHANNEL, (payload) => this.deliver(payload));
  }

  private deliver(payload: string): void {
    const at = payload.lastIndexOf(':');
    const type = payload.slice(0, at);
    const jobId = payload.slice(at + 1);
    if (!jobId) return this.log.warn(`notification without a job: ${payload}`);
    if (type === 'batch.cancelled') this.signals.cancelled(jobId);
    if (type === 'batch.queued' || type === 'batch.requeued') this.signals.submitted(jobId);
    // A crawl's page may have added targets another instance can take.
    if (type === 'crawl.page') this.signals.grown(jobId);
    this.signals.evented(jobId);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop?.();
  }
}
