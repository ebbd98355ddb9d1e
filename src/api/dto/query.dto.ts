import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { VERDICTS, type Verdict } from '../../extract/verdict';

/** A target's idx and an event's seq are 32-bit integers in the database: paging past them is 400. */
export const MAX_INT32 = 2_147_483_647;

export class JobListQueryDto {
  /** The `next` value of the previous page. */
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;

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

/** `true`/`1` or `false`/`0` as a query string says it; anything else stays as given and fails IsBoolean. */
const queryBoolean = ({ value }: { value: unknown }) =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

export class DeleteQueryDto {
  /** true (or 1): delete the ended job with its results, events and deliveries (204), instead of cancelling. */
  @IsOptional()
  @Transform(queryBoolean)
  @IsBoolean()
  purge?: boolean;
}
