import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { RESTART_POLICIES, type RestartPolicy } from '../../common/job-status';
import { MAX_MAP_LIMIT } from '../../crawl/map.service';
import { MAX_GLOB_CHARS } from '../../crawl/scope';
import { MAX_DEPTH, MAX_GLOBS, SITEMAP_MODES, type SitemapMode } from '../../crawl/spec';
import { HARD_MAX_TARGETS, WebhookDto } from './batch.dto';
import { FetchOptionsDto } from './fetch.dto';
import { IsHttpUrl, MAX_URL_LENGTH } from './validators';

/** Where a crawl or a map starts, and which of the site's URLs it takes. */
class SiteScopeDto {
  /** The seed: an absolute http or https URL. Links are followed on its host (and `www.` of it). */
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  @IsHttpUrl()
  url: string;

  /** Globs on the path a URL must match one of (`/docs/**`); none: every path. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_GLOBS)
  @IsString({ each: true })
  @MaxLength(MAX_GLOB_CHARS, { each: true })
  include_paths?: string[];

  /** Globs on the path no URL may match. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_GLOBS)
  @IsString({ each: true })
  @MaxLength(MAX_GLOB_CHARS, { each: true })
  exclude_paths?: string[];

  /** Subdomains of the seed's host are in scope too. */
  @IsOptional()
  @IsBoolean()
  allow_subdomains?: boolean;

  /** include (default): the site's sitemaps and its links; skip: links only; only: the sitemaps' URLs only. */
  @IsOptional()
  @IsIn(SITEMAP_MODES)
  sitemap?: SitemapMode;
}

export class CrawlSubmitDto extends SiteScopeDto {
  /** The most pages the crawl holds, its seed included (default 100, at most the class's target limit). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(HARD_MAX_TARGETS)
  limit?: number;

  /** Link hops from the seed a page may be (default 3; a sitemap's entry is one hop). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_DEPTH)
  max_depth?: number;

  /** Links to other hosts are followed too (each held to the caller's address policy and robots.txt). */
  @IsOptional()
  @IsBoolean()
  allow_external?: boolean;

  /** URLs that differ only in their query are one page. */
  @IsOptional()
  @IsBoolean()
  ignore_query?: boolean;

  /** Fetch options for every page (those of /v1/fetch). */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => FetchOptionsDto)
  options?: FetchOptionsDto;

  /** What happens to this crawl if sift restarts while it is live. */
  @IsOptional()
  @IsIn(RESTART_POLICIES)
  on_restart?: RestartPolicy;

  /** Signed deliveries of this crawl's events (`crawl.page` for each page) to a URL of the caller's. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => WebhookDto)
  webhook?: WebhookDto;

  /** Seconds the crawl and its results are kept after its last activity (60 to SIFT_BATCH_MAX_TTL_S). */
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

export class MapRequestDto extends SiteScopeDto {
  /** The most URLs answered (default 5,000, at most 30,000). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_MAP_LIMIT)
  limit?: number;
}
