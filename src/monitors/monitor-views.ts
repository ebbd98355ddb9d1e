import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { MonitorRow } from '../dcache';

/** What a monitor's `request` column holds: what each run submits. */
export type MonitorAsk = { urls: string[]; options?: object } | { crawl: object };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

@ApiSchema({ name: 'MonitorWebhookViewDto' })
export class MonitorWebhookView {
  @ApiProperty() url: string;
}

/** A monitor as the API shows it (its webhook's secret is never shown). */
@ApiSchema({ name: 'MonitorDto' })
export class MonitorView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional({ type: [String], description: 'The pages each run reads.' }) urls?: string[];
  @ApiPropertyOptional({ type: Object, description: 'The crawl each run runs.' }) crawl?: object;
  @ApiPropertyOptional({ type: Object, description: "The pages' fetch options." }) options?: object;
  @ApiPropertyOptional({ description: 'A cron expression, in UTC.' }) schedule?: string;
  @ApiPropertyOptional({ description: 'Seconds between runs.' }) every_s?: number;
  @ApiProperty({ type: MonitorWebhookView, nullable: true }) webhook: MonitorWebhookView | null;
  @ApiProperty({ enum: ['changed', 'always'] }) notify: string;
  @ApiProperty() paused: boolean;
  @ApiProperty({
    format: 'date-time',
    description: "The next run's slot (while paused, the one it would have).",
  })
  next_run_at: string;
  @ApiProperty({ description: 'Runs so far.' }) runs: number;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The last run: a job of kind monitor_run.',
  })
  last_run_id: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_run_at: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "Why the last slot's run was not started (the previous one still running, a limit), or null.",
  })
  last_error: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export function monitorView(m: MonitorRow): MonitorView {
  const ask = JSON.parse(m.request) as MonitorAsk;
  const hook = m.webhook ? (JSON.parse(m.webhook) as { url: string }) : null;
  return {
    id: m.id,
    name: m.name,
    ...('urls' in ask
      ? { urls: ask.urls, ...(ask.options ? { options: ask.options } : {}) }
      : { crawl: ask.crawl }),
    ...(m.schedule ? { schedule: m.schedule } : { every_s: m.every_s }),
    webhook: hook && { url: hook.url },
    notify: m.notify,
    paused: m.paused === 1,
    next_run_at: iso(m.next_at)!,
    runs: m.runs,
    last_run_id: m.last_run_id,
    last_run_at: iso(m.last_run_at),
    last_error: m.last_error,
    created_at: iso(m.created_at)!,
  };
}
