import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { Metadata } from '../extract/metadata';
import type { Format } from '../extract/extract';
import { VERDICTS, type Verdict } from '../extract/verdict';

@ApiSchema({ name: 'MetadataDto' })
export class PageMetadata implements Metadata {
  @ApiProperty({ type: String, nullable: true }) author: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) published_at: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'en' }) language: string | null;
  @ApiProperty({ type: String, nullable: true }) site_name: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, nullable: true }) canonical_url: string | null;
  @ApiProperty({ type: String, nullable: true }) image: string | null;
}

@ApiSchema({ name: 'LinkDto' })
export class PageLink {
  @ApiProperty() url: string;
  @ApiProperty() text: string;
}

/**
 * What a fetch answers, on /v1/fetch and in every batch result: the one definition of its shape,
 * at run time and in the OpenAPI document. Cached and fresh answers are both serialized from it.
 */
@ApiSchema({ name: 'FetchResponseDto' })
export class FetchEnvelope {
  @ApiProperty({ example: 'https://example.com/' }) url: string;
  @ApiProperty({ example: 'https://example.com/' }) final_url: string;
  @ApiProperty({ description: 'The upstream HTTP status.', example: 200 }) status: number;
  @ApiProperty({ example: 'text/html; charset=utf-8' }) content_type: string;
  @ApiProperty({ example: 'Example Domain' }) title: string;
  @ApiProperty({ enum: ['markdown', 'text', 'html'] }) format: Format;
  @ApiProperty({ example: '# Example Domain\n\nThis domain is for use in examples.' }) content: string;
  @ApiProperty({ description: 'UTF-8 bytes of content.', example: 54 }) bytes: number;
  @ApiProperty({ description: 'Whether content was cut at the output cap.' }) truncated: boolean;
  @ApiProperty({ description: 'Whether this came from the cache.' }) cached: boolean;
  @ApiProperty({
    description:
      'Whether the cached copy was confirmed by the site (a 304 to a conditional request) for this answer.',
  })
  revalidated: boolean;
  @ApiProperty({
    enum: VERDICTS,
    description:
      'What the page is: ok; empty (a 2xx html page of under 50 words); challenge (a bot check, captcha wall or JavaScript-only shell); not_found (a 200 page that says it is missing); error_page (an upstream 4xx/5xx).',
  })
  verdict: Verdict;
  @ApiProperty({ format: 'date-time' }) fetched_at: string;
  @ApiProperty({ example: 'sha256:0f…' }) digest: string;
  @ApiProperty({ type: PageMetadata, description: 'What the page says about itself; null where unknown.' })
  metadata: PageMetadata;
  @ApiPropertyOptional({
    type: [PageLink],
    description: "With the option links: true, the main content's links (absolute), each URL once.",
  })
  links?: PageLink[];
}
