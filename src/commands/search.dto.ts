import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';

/** The body of POST /v1/search. */
export class SearchRequestDto {
  /**
   * Words to find (at most 500 characters): a page matches when it has every one, in its title or
   * its text; English words match their other forms (install, installing). Punctuation only
   * separates words.
   */
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  @Matches(/[\p{L}\p{N}]/u, { message: 'query must have a word (a letter or a digit)' })
  query: string;

  /** Only pages of these jobs of yours (batches, crawls, monitor runs), at most 100. */
  @ApiPropertyOptional({ type: [String], maxItems: 100 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  jobs?: string[];

  /** Only pages of this host (with its port, if the URL has one), or of a host under it. */
  @ApiPropertyOptional({ example: 'docs.example.com' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/, { message: 'site must be a host name, as example.com' })
  site?: string;

  /** At most this many hits, best first (default 10). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}
