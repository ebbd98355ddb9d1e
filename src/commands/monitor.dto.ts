import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  MinLength,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { FetchOptionsDto } from './fetch.dto';
import { CrawlSubmitDto } from './crawl.dto';
import { IsHttpUrl, IsWebhookSecret, MAX_URL_LENGTH } from './validators';

export const NOTIFY_MODES = ['changed', 'always'] as const;
/** The longest `every_s`: 31 days. */
export const MAX_EVERY_S = 31 * 86400;

/** A monitor's webhook: Standard Webhooks, signed with `secret`; the events are the monitor's. */
export class MonitorWebhookDto {
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  @IsHttpUrl()
  url: string;

  @IsWebhookSecret()
  secret: string;
}

/** POST /v1/monitors: pages or a crawl, read again on a schedule (see src/monitors). */
export class CreateMonitorDto {
  /** Its name, 1 to 100 characters: yours to tell monitors apart. */
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  name: string;

  /** The pages it reads each run (or `crawl`). */
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsString({ each: true })
  urls?: string[];

  /** A crawl it runs each run, as POST /v1/crawl takes it (or `urls`); its options are the pages'. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CrawlSubmitDto)
  crawl?: CrawlSubmitDto;

  /** A cron expression (5 fields, or 6 with seconds first), in UTC (or `every_s`). */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  schedule?: string;

  /** Seconds between runs (or `schedule`). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_EVERY_S)
  every_s?: number;

  /** Fetch options of each page of `urls` ("changes" is always among the formats). */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => FetchOptionsDto)
  options?: FetchOptionsDto;

  /** Where page.changed, page.removed and monitor.run.done are sent. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => MonitorWebhookDto)
  webhook?: MonitorWebhookDto;

  /** changed (default): the webhook hears of a run only when a page changed or went; always: of every run. */
  @ApiPropertyOptional({ enum: NOTIFY_MODES })
  @IsOptional()
  @IsIn(NOTIFY_MODES)
  notify?: (typeof NOTIFY_MODES)[number];
}
