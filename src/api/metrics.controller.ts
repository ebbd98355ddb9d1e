import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from './api-errors.decorator';
import { Gauge } from 'prom-client';
import { Metrics } from '../common/metrics';
import { DELIVERY_STATES, JOB_STATUSES } from '../common/job-status';
import { Dcache } from '../dcache';
import { RunnerService } from '../runner/runner.service';
import { MetricsAggregates } from './metrics-aggregates';
import { MetricsGuard } from './metrics.guard';

/**
 * Prometheus metrics. Counters and the figures held in memory are read at each scrape; those of the
 * database come from MetricsAggregates, read at most every 15 s, never on a scrape's path.
 */
@ApiTags('operations')
@Controller()
@UseGuards(MetricsGuard)
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    dcache: Dcache,
    runner: RunnerService,
    aggregates: MetricsAggregates,
  ) {
    const r = metrics.registry;
    const gauge = (
      name: string,
      help: string,
      labelNames: string[],
      collect: (g: Gauge) => Promise<void> | void,
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [r],
        collect() {
          return collect(this);
        },
      });
    gauge(
      'sift_cache',
      'Content cache: entries, bytes, max_bytes, hits, misses, evictions.',
      ['stat'],
      (g) => {
        for (const [k, v] of Object.entries(dcache.cache.stats()))
          g.set({ stat: k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) }, v);
      },
    );
    gauge('sift_batch_jobs', 'Batch jobs by status.', ['status'], async (g) => {
      const { jobsByStatus } = await aggregates.current();
      for (const s of JOB_STATUSES) g.set({ status: s }, jobsByStatus[s] ?? 0);
    });
    gauge('sift_batch_bytes', 'Bytes of stored batch results.', [], async (g) =>
      g.set((await aggregates.current()).batchBytes),
    );
    gauge(
      'sift_runner_queue_depth',
      'Targets of live jobs not yet finished (in flight included).',
      [],
      async (g) => g.set((await aggregates.current()).liveTargetsLeft),
    );
    gauge('sift_runner_in_flight', 'Targets being fetched now.', [], (g) => g.set(runner.stats.inFlight));
    gauge(
      'sift_instances',
      'Live instances on the database (heartbeat within SIFT_INSTANCE_TTL_S).',
      [],
      async (g) => g.set((await aggregates.current()).instances.length),
    );
    gauge('sift_claims', 'Targets each live instance holds (claimed, running).', ['instance'], async (g) => {
      const { instances } = await aggregates.current();
      g.reset();
      for (const i of instances) g.set({ instance: i.id }, i.claims);
    });
    gauge('sift_webhook_deliveries', 'Webhook deliveries stored, by state.', ['state'], async (g) => {
      const { deliveries } = await aggregates.current();
      for (const s of DELIVERY_STATES) g.set({ state: s }, deliveries[s]);
    });
    gauge('sift_store_misses', 'Batch store misses per accessor.', ['accessor'], (g) => {
      for (const [k, v] of Object.entries(dcache.db.misses)) g.set({ accessor: k }, v);
    });
  }

  /** Prometheus metrics, in the text exposition format. */
  @Get('metrics')
  @ApiBearerAuth()
  @ApiErrors(401, 403)
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string' }, description: 'Prometheus text format 0.0.4.' })
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
