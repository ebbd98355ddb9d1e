import { IntersectionType } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { MAX_MAP_LIMIT } from '../crawl';
import { MAX_GLOB_CHARS, MAX_REGEX_CHARS } from '../crawl';
import {
  LLMS_TXT_MODES,
  MAX_DEPTH,
  MAX_GLOBS,
  SITEMAP_MODES,
  type LlmsTxtMode,
  type SitemapMode,
} from '../crawl';
import { JobAskDto } from './batch.dto';
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

  /**
   * Regular expressions (RE2 syntax, as Firecrawl's includePaths) of which one must be found in a
   * URL's path (`^/blog/`); none: every path. At most 20, 256 characters each, and 128 compiled
   * instructions with exclude_regex.
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_GLOBS)
  @IsString({ each: true })
  @MaxLength(MAX_REGEX_CHARS, { each: true })
  include_regex?: string[];

  /** Regular expressions none of which may be found in a URL's path. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_GLOBS)
  @IsString({ each: true })
  @MaxLength(MAX_REGEX_CHARS, { each: true })
  exclude_regex?: string[];

  /** Subdomains of the seed's host are in scope too. */
  @IsOptional()
  @IsBoolean()
  allow_subdomains?: boolean;

  /** include (default): the site's sitemaps and its links; skip: links only; only: the sitemaps' URLs only. */
  @IsOptional()
  @IsIn(SITEMAP_MODES)
  sitemap?: SitemapMode;

  /**
   * The site's /llms.txt: skip (default): not read; include: its links beside the rest, one hop
   * from the seed; only: its links are all that is followed (no links of pages, no sitemaps).
   */
  @IsOptional()
  @IsIn(LLMS_TXT_MODES)
  llms_txt?: LlmsTxtMode;
}

export class CrawlSubmitDto extends IntersectionType(SiteScopeDto, JobAskDto) {
  /** The most pages the crawl holds, its seed included (default 100, at most the class's target limit). */
  @IsOptional()
  @IsInt()
  @Min(1)
  limit?: number;

  /** Link hops from the seed a page may be (default 3; a sitemap's entry is one hop). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_DEPTH)
  max_depth?: number;

  /**
   * Only URLs whose path starts with this are followed (`/docs/guide/`): the seed's folder and
   * below, as Firecrawl crawls unless `crawlEntireDomain`. Absent: every path of the site.
   */
  @IsOptional()
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  path_prefix?: string;

  /** Links to other hosts are followed too (each held to the caller's address policy and robots.txt). */
  @IsOptional()
  @IsBoolean()
  allow_external?: boolean;

  /** URLs that differ only in their query are one page. */
  @IsOptional()
  @IsBoolean()
  ignore_query?: boolean;
}

export class MapRequestDto extends SiteScopeDto {
  /** The most URLs answered (default 5,000, at most 30,000). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_MAP_LIMIT)
  limit?: number;
}

/**
 * POST /v1/llmstxt's body: a crawl's (the site, its scope and limit, the pages' options but their
 * format: its pages are read as markdown).
 */
export class LlmsTxtSubmitDto extends CrawlSubmitDto {}
