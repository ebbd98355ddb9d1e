import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { BatchStore } from '../dcache';

export const SERVER_RESTARTED = 'server_restarted';

export interface ReconcileReport {
  failed: number;
  requeued: number;
  resumed: number;
}

/**
 * Start-up reconciliation: every job left queued or running moves by its on_restart policy, its
 * state and its event in one transaction.
 *   fail:   queued/running → failed (server_restarted, batch.failed)
 *   retry:  queued → queued; running → queued with every target pending again (batch.requeued)
 *   resume: queued → queued; running → running, finished targets kept, the rest pending (batch.requeued)
 */
@Injectable()
export class RestartService {
  private readonly log = new Logger('restart');

  constructor(
    private readonly store: BatchStore,
    private readonly clock: Clock,
  ) {}

  async reconcile(): Promise<ReconcileReport> {
    const now = this.clock.now();
    const report: ReconcileReport = { failed: 0, requeued: 0, resumed: 0 };
    report.failed = await this.store.markInFlightFailed(SERVER_RESTARTED, now);
    for (const job of await this.store.liveJobsForRestart()) {
      await this.store.transaction(async (s) => {
        if (job.onRestart === 'retry') {
          const reset = await s.resetTargets(job.id, ['running', 'done', 'failed'], now);
          if (job.status === 'running') {
            await s.setBatchJobStatus(job.id, 'queued', '', now);
            await s.appendEvent(job.id, 'batch.requeued', now, { policy: 'retry', targets_reset: reset });
            report.requeued++;
          } else {
            await s.touchBatchJob(job.id, now);
          }
        } else {
          // resume (and queued jobs of any live policy): targets caught mid-fetch start again.
          const reset = await s.resetTargets(job.id, ['running'], now);
          await s.touchBatchJob(job.id, now);
          if (job.status === 'running') {
            await s.appendEvent(job.id, 'batch.requeued', now, { policy: 'resume', targets_reset: reset });
            report.resumed++;
          }
        }
      });
    }
    if (report.failed + report.requeued + report.resumed > 0) {
      this.log.log(
        `after restart: ${report.failed} failed, ${report.requeued} requeued, ${report.resumed} resumed`,
      );
    }
    return report;
  }
}
