import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { RESTART_POLICIES, type RestartPolicy } from '../../batch/job-status';
import { FetchOptionsDto } from './fetch.dto';
import { IsHttpUrl } from './validators';

/** No class may raise its target limit above this; the class limit is checked after validation. */
export const HARD_MAX_TARGETS = 100_000;

export class BatchTargetDto {
  /** The page to fetch: an absolute http or https URL. */
  @IsString()
  @MaxLength(8192)
  @IsHttpUrl()
  url: string;

  /** This target's fetch options; they override the job's `options`. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => FetchOptionsDto)
  options?: FetchOptionsDto;
}

export class BatchSubmitDto {
  /** The URLs to fetch, in order; results keep this order (idx 0, 1, …). */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(HARD_MAX_TARGETS)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => BatchTargetDto)
  targets: BatchTargetDto[];

  /** Default fetch options for every target. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => FetchOptionsDto)
  options?: FetchOptionsDto;

  /** What happens to this job if sift restarts while it is live. */
  @IsOptional()
  @IsIn(RESTART_POLICIES)
  on_restart?: RestartPolicy;

  /** Same as the Idempotency-Key header. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  idempotency_key?: string;
}
