import { Body, Controller, Headers, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { BatchService } from '../batch/batch.service';
import { JobView } from '../batch/views';
import { MapService } from '../crawl';
import type { Caller } from '../pages/caller-policy';
import { Admission } from './admission';
import { hangup } from '../common/hangup';
import { ApiErrors } from './api-errors.decorator';
import { AuthGuard } from './auth.guard';
import { BodyLimit, SMALL_BODY } from './body-limit';
import { CurrentCaller } from './caller.decorator';
import { checkIdemKey, CrawlSubmitDto, MapRequestDto } from '../commands';

class MapLinkDto {
  @ApiProperty() url: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The link's text on the seed page or in the site's llms.txt; null for a sitemap's entry.",
  })
  title: string | null;
  @ApiProperty({ enum: ['page', 'llms_txt', 'sitemap'] }) source: 'sitemap' | 'page' | 'llms_txt';
}

class MapResponseDto {
  @ApiProperty({ type: MapLinkDto, isArray: true }) links: MapLinkDto[];
}

@ApiTags('crawl')
@ApiBearerAuth()
@Controller('v1')
@UseGuards(AuthGuard)
export class CrawlController {
  constructor(
    private readonly batch: BatchService,
    private readonly maps: MapService,
    private readonly admission: Admission,
  ) {}

  /**
   * Crawls a site from its seed: a job (kind crawl) stored before the 202, whose pages are read,
   * paged, streamed, cancelled, retried and purged through the /v1/batch routes.
   */
  @BodyLimit(SMALL_BODY)
  @Post('crawl')
  @HttpCode(202)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'As for POST /v1/batch: the same key with the same body returns the job it made.',
  })
  @ApiResponse({ status: 202, type: JobView, description: 'Stored; Location: /v1/batch/{id}.' })
  @ApiResponse({ status: 200, type: JobView, description: 'Idempotent replay (Idempotent-Replayed: true).' })
  @ApiErrors(400, 401, 403, 409, 413, 415, 429, 503)
  async crawl(
    @CurrentCaller() caller: Caller,
    @Body() body: CrawlSubmitDto,
    @Headers('idempotency-key') idemKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<JobView> {
    checkIdemKey(idemKey);
    const { job, replayed } = await this.batch.submitCrawl(caller, body, idemKey);
    res.setHeader('Location', `/v1/batch/${job.id}`);
    if (replayed) {
      res.status(200);
      res.setHeader('Idempotent-Replayed', 'true');
    }
    return job;
  }

  /** A site's URLs, from the seed page's links, its llms.txt and its sitemaps, without reading the pages. */
  @BodyLimit(SMALL_BODY)
  @Post('map')
  @HttpCode(200)
  @ApiOkResponse({ type: MapResponseDto })
  @ApiErrors(400, 401, 403, 413, 415, 422, 429, 502, 503, 504)
  async map(
    @CurrentCaller() caller: Caller,
    @Body() body: MapRequestDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MapResponseDto> {
    const leave = this.admission.enter('fetch', caller);
    // A caller that hangs up stops the map (its page fetch and sitemap reads).
    const gone = hangup(res);
    try {
      return await this.maps.map(caller, body, gone.signal());
    } finally {
      gone.done();
      leave();
    }
  }
}
