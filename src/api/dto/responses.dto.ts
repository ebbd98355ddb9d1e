import { ApiProperty } from '@nestjs/swagger';
import { DeliveryView, EventView, JobView, TargetResult, WebhookView } from '../../batch/views';
import { ErrorBody } from '../../common/error-codes';

/*
 * The envelopes around the domain's views. The views themselves (JobView, TargetResult,
 * EventView, FetchEnvelope, ErrorBody) are built by the services and are their own schemas.
 */

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorBody })
  error: ErrorBody;
}

export class HealthResponseDto {
  @ApiProperty({ example: true })
  ok: boolean;

  @ApiProperty({ enum: ['sqlite', 'postgres'], description: 'Where the state lives.' })
  backend: 'sqlite' | 'postgres';

  @ApiProperty({ format: 'uuid', description: 'This process; new at every start.' })
  instance: string;

  @ApiProperty({
    enum: ['reachable', 'unreachable'],
    description:
      'Whether the database answered the last heartbeat; unreachable comes with 503, so a load balancer drains the instance.',
  })
  database: 'reachable' | 'unreachable';

  @ApiProperty({
    description:
      'Whether pages can be rendered: Chromium is at SIFT_CHROMIUM_PATH and did not fail to start in the last minute.',
  })
  render: boolean;
}

export class JobListResponseDto {
  @ApiProperty({ type: [JobView] }) jobs: JobView[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as after for the next page (opaque); null at the end.',
  })
  next: string | null;
}

export class ResultsPageDto {
  @ApiProperty({ type: [TargetResult] }) results: TargetResult[];
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Pass as after for the next page; null at the end.',
  })
  next: number | null;
}

export class EventsResponseDto {
  @ApiProperty({ type: [EventView] }) events: EventView[];

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'The seq to pass as after for the next page; null when no event is left.',
    example: 1000,
  })
  next: number | null;
}

export class DeliveriesResponseDto {
  @ApiProperty({
    type: WebhookView,
    nullable: true,
    description: "The job's webhook (never its secret); null when it has none.",
  })
  webhook: WebhookView | null;

  @ApiProperty({ type: [DeliveryView] }) deliveries: DeliveryView[];

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'The seq to pass as after for the next page; null at the end.',
  })
  next: number | null;
}

export class RedeliverResponseDto {
  @ApiProperty({ description: 'Deliveries queued to be sent again.' }) queued: number;
}
