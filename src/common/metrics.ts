import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** prom-client (the kept Prometheus client): one registry per app, so tests do not share counters. */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly fetches = new Counter({
    name: 'sift_fetches_total',
    help: 'Fetches by outcome (ok, or the error code) and the verdict of the page (none for an error).',
    labelNames: ['outcome', 'verdict'] as const,
    registers: [this.registry],
  });

  readonly fetchSeconds = new Histogram({
    name: 'sift_fetch_duration_seconds',
    help: 'Time to answer a fetch, cache hits included.',
    labelNames: ['cached'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly targets = new Counter({
    name: 'sift_batch_targets_total',
    help: 'Batch targets finished, by status.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly claims = new Counter({
    name: 'sift_claims_total',
    help: 'Claims this instance made (one transaction each), and the targets they took.',
    labelNames: ['what'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'sift_webhook_attempts_total',
    help: 'Webhook delivery attempts of this instance, by outcome: delivered, retry (to be sent again), failed (given up).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookSeconds = new Histogram({
    name: 'sift_webhook_attempt_duration_seconds',
    help: 'Time from sending a webhook delivery to its answer (or error).',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'sift_' });
  }
}
