import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'blocked_address',
  'not_found',
  'payload_too_large',
  'unsupported_encoding',
  'idempotency_conflict',
  'not_cancellable',
  'too_many_targets',
  'too_many_jobs',
  'too_many_requests',
  'server_busy',
  'storage_full',
  'dns_error',
  'connect_error',
  'tls_error',
  'too_many_redirects',
  'too_large',
  'unsupported_content_type',
  'timeout',
  'extraction_failed',
  'internal',
] as const;

export class ErrorBodyDto {
  @ApiProperty({ enum: ERROR_CODES, example: 'invalid_request' })
  code: string;

  @ApiProperty({ example: 'url must be an absolute http or https URL' })
  message: string;

  @ApiProperty({
    description: 'What to do next.',
    example: 'fix the named fields and send the request again',
  })
  hint: string;
}

export class ErrorResponseDto {
  @ApiProperty({ type: ErrorBodyDto })
  error: ErrorBodyDto;
}

export class HealthResponseDto {
  @ApiProperty({ example: true })
  ok: boolean;
}

export class FetchResponseDto {
  @ApiProperty({ example: 'https://example.com/' }) url: string;
  @ApiProperty({ example: 'https://example.com/' }) final_url: string;
  @ApiProperty({ description: 'The upstream HTTP status.', example: 200 }) status: number;
  @ApiProperty({ example: 'text/html; charset=utf-8' }) content_type: string;
  @ApiProperty({ example: 'Example Domain' }) title: string;
  @ApiProperty({ enum: ['markdown', 'text', 'html'] }) format: string;
  @ApiProperty({ example: '# Example Domain\n\nThis domain is for use in examples.' }) content: string;
  @ApiProperty({ description: 'UTF-8 bytes of content.', example: 54 }) bytes: number;
  @ApiProperty({ description: 'Whether content was cut at the output cap.' }) truncated: boolean;
  @ApiProperty({ description: 'Whether this came from the cache.' }) cached: boolean;
  @ApiProperty({ format: 'date-time' }) fetched_at: string;
  @ApiProperty({ example: 'sha256:0f…' }) digest: string;
}

export class JobViewDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['queued', 'running', 'done', 'partial', 'failed', 'cancelled'] }) status: string;
  @ApiProperty({ description: "The job's error, '' when none (e.g. server_restarted).", example: '' })
  error: string;
  @ApiProperty() targets_total: number;
  @ApiProperty() targets_done: number;
  @ApiProperty() targets_failed: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) lease_expires_at: string;
  @ApiProperty({ description: 'UTF-8 bytes of stored results.' }) nbytes: number;
  @ApiProperty({ enum: ['fail', 'retry', 'resume'] }) on_restart: string;
}

export class JobListResponseDto {
  @ApiProperty({ type: [JobViewDto] }) jobs: JobViewDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null at the end.',
  })
  next: string | null;
}

export class TargetResultDto {
  @ApiProperty() idx: number;
  @ApiProperty() url: string;
  @ApiProperty({ enum: ['pending', 'running', 'done', 'failed'] }) status: string;
  @ApiPropertyOptional({ type: FetchResponseDto, nullable: true }) result: FetchResponseDto | null;
  @ApiPropertyOptional({ type: ErrorBodyDto, nullable: true }) error: ErrorBodyDto | null;
}

export class ResultsPageDto {
  @ApiProperty({ type: [TargetResultDto] }) results: TargetResultDto[];
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Pass as after for the next page; null at the end.',
  })
  next: number | null;
}

export class EventDto {
  @ApiProperty() seq: number;
  @ApiProperty({
    enum: [
      'batch.queued',
      'batch.running',
      'target.done',
      'target.failed',
      'batch.done',
      'batch.partial',
      'batch.failed',
      'batch.cancelled',
      'batch.requeued',
    ],
  })
  type: string;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: object;
}

export class EventsResponseDto {
  @ApiProperty({ type: [EventDto] }) events: EventDto[];

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'The seq to pass as after for the next page; null when no event is left.',
    example: 1000,
  })
  next: number | null;
}
