import { ApiProperty } from '@nestjs/swagger';
import { EventView, JobView, TargetResult } from '../../batch/views';
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
}

export class JobListResponseDto {
  @ApiProperty({ type: [JobView] }) jobs: JobView[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null at the end.',
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
