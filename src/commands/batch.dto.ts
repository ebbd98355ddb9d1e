import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { EVENT_TYPES, RESTART_POLICIES, type EventType, type RestartPolicy } from '../common/job-status';
import { FetchOptionsDto } from './fetch.dto';
import { IsHttpUrl, IsWebhookSecret, MAX_URL_LENGTH, SelectorBudget } from './validators';

export class BatchTargetDto {
  /**
   * The page to fetch: an absolute http or https URL of at most 8,192 characters. Any other is a
   * 400 naming the target, or, with `ignore_invalid_urls`, a target failed `invalid_url`.
   */
  @IsString()
  url: string;

  /** This target's fetch options; they override the job's `options`. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => FetchOptionsDto)
  options?: FetchOptionsDto;
}

export class WebhookDto {
  /** Where each event is POSTed: an absolute http or https URL the caller may reach. */
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  @IsHttpUrl()
  url: string;

  /** `whsec_` + base64 of 24 to 64 random bytes; deliveries are signed with it (Standard Webhooks). */
  @IsWebhookSecret()
  secret: string;

  /** The event types to deliver; default every `batch.*` type. */
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsIn(EVENT_TYPES, { each: true, message: `$property must be event types: ${EVENT_TYPES.join(', ')}` })
  events?: EventType[];
}

/** What every job's submission may ask beside what it fetches: batches and crawls alike. */
export class JobAskDto {
  /** Fetch options for every target (a crawl: every page); a batch target's own override them. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => FetchOptionsDto)
  options?: FetchOptionsDto;

  /** What happens to the job if sift restarts while it is live. */
  @IsOptional()
  @IsIn(RESTART_POLICIES)
  on_restart?: RestartPolicy;

  /** Signed deliveries of the job's events to a URL of the caller's (a crawl's pages: `crawl.page`). */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => WebhookDto)
  webhook?: WebhookDto;

  /**
   * Seconds the job and its results are kept after its last activity (60 to SIFT_BATCH_MAX_TTL_S;
   * default SIFT_BATCH_TTL_S).
   */
  @IsOptional()
  @IsInt()
  @Min(60)
  ttl_s?: number;

  /** Same as the Idempotency-Key header. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  idempotency_key?: string;
}

export class BatchSubmitDto extends JobAskDto {
  /**
   * The URLs to fetch, in order; results keep this order (idx 0, 1, …). At most the caller's class
   * limit (SIFT_FLEET_MAX_TARGETS, SIFT_RESTRICTED_MAX_TARGETS), checked before these rules.
   */
  @IsArray()
  @ArrayMinSize(1)
  @IsObject({ each: true })
  @SelectorBudget()
  @ValidateNested({ each: true })
  @Type(() => BatchTargetDto)
  targets: BatchTargetDto[];

  /** Targets whose URL is not an absolute http(s) URL become failed targets (`invalid_url`) instead of a 400. */
  @IsOptional()
  @IsBoolean()
  ignore_invalid_urls?: boolean;
}

export class RedeliverDto {
  /** Also deliveries already delivered (default: only those not delivered). */
  @IsOptional()
  @IsBoolean()
  all?: boolean;
}
