import { ApiHideProperty, ApiPropertyOptional, type ApiQueryOptions } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { VERDICTS, type Verdict } from '../extract/verdict';
import { JOB_STATUSES, TARGET_STATUSES, type JobStatus, type TargetStatus } from '../common/job-status';

/** A target's idx and an event's seq are 32-bit integers in the database: paging past them is 400. */
export const MAX_INT32 = 2_147_483_647;

/**
 * `status=a,b` (or `status=a&status=b`) as a list without repeats; each value is then checked
 * against the statuses (IsIn each), so an unknown or empty one is 400.
 */
const statusList = ({ value }: { value: unknown }) => {
  if (value === undefined) return undefined;
  const parts = [value]
    .flat()
    .flatMap((v) => (typeof v === 'string' ? v.split(',').map((p) => p.trim()) : [v]));
  return [...new Set(parts)];
};

/** `true`/`1` or `false`/`0` as a query string says it; anything else stays as given and fails IsBoolean. */
const queryBoolean = ({ value }: { value: unknown }) =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

/**
 * The OpenAPI of a `status` query parameter: a string of comma-separated statuses (the DTO holds
 * them as an array, which the swagger plugin would document as one).
 */
export function statusQuery(statuses: readonly string[], what: string, example: string): ApiQueryOptions {
  const one = `(${statuses.join('|')})`;
  return {
    name: 'status',
    required: false,
    schema: { type: 'string', pattern: `^${one}(,${one})*$`, example },
    description: `Only ${what} in these statuses, comma-separated (${statuses.join(', ')}); the parameter may also be repeated. Another value is 400.`,
  };
}

export class JobListQueryDto {
  /** The `next` value of the previous page. */
  @IsOptional()
  @IsString()
  @MaxLength(512)
  after?: string;

  @ApiPropertyOptional({
    type: String,
    deprecated: true,
    description:
      'Deprecated: the old name of `after`, still accepted. Given with `after`, both must be equal.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;

  /** Documented as a comma-separated string by the route (see statusQuery), not as an array. */
  @ApiHideProperty()
  @IsOptional()
  @Transform(statusList)
  @ArrayMaxSize(JOB_STATUSES.length)
  @IsIn(JOB_STATUSES, { each: true })
  status?: JobStatus[];

  /** Jobs per page (1–100, default 20). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}

export class ResultsQueryDto {
  /** Return targets with idx greater than this (default -1: from the start). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(-1)
  @Max(MAX_INT32)
  after?: number;

  /** Targets per page (1–1000, default 100). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  /** Only done targets with this verdict (e.g. challenge, to see what was blocked). */
  @IsOptional()
  @IsIn(VERDICTS)
  verdict?: Verdict;

  /** Documented as a comma-separated string by the route (see statusQuery), not as an array. */
  @ApiHideProperty()
  @IsOptional()
  @Transform(statusList)
  @ArrayMaxSize(TARGET_STATUSES.length)
  @IsIn(TARGET_STATUSES, { each: true })
  status?: TargetStatus[];

  @ApiPropertyOptional({
    type: Boolean,
    description:
      "With Accept: application/x-ndjson: write each target once it has ended, in idx order, and end the stream when the job has ended. Without it, a live job's pending and running targets are written as they stand.",
  })
  @IsOptional()
  @Transform(queryBoolean)
  @IsBoolean()
  follow?: boolean;
}

export class EventsQueryDto {
  /** Return events with seq greater than this (default 0). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(MAX_INT32)
  after?: number;

  /** Events per page (1–1000, default 1000). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

export class DeliveriesQueryDto extends EventsQueryDto {}

export class DeleteQueryDto {
  /** true (or 1): delete the ended job with its results, events and deliveries (204), instead of cancelling. */
  @IsOptional()
  @Transform(queryBoolean)
  @IsBoolean()
  purge?: boolean;
}
