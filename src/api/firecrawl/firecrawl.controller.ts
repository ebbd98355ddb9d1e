import { AppConfig } from '../../config/app-config';
import { Body, Controller, Headers, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { BatchService } from '../../batch/batch.service';
import { MapService } from '../../crawl';
import type { Caller } from '../../pages/caller-policy';
import { PageService } from '../../pages/page.service';
import { Admission } from '../admission';
import { hangup } from '../../common/hangup';
import { AuthGuard } from '../auth.guard';
import { BodyLimit, JOB_BODY, SMALL_BODY } from '../body-limit';
import { CurrentCaller } from '../caller.decorator';
import { BatchSubmitDto, checkIdemKey, CrawlSubmitDto, FetchRequestDto, MapRequestDto } from '../../commands';
import { inFirecrawlNames, siftBody } from './firecrawl-body';
import { checkCrawlFields, checkMapFields, checkScrapeFields } from './firecrawl-fields';
import { batchOf, crawlOf, documentOf, fetchOptionsOf, mapOf } from './firecrawl-mapping';
import { apiUrl, FIRECRAWL_MOUNTS, isV1 } from './firecrawl-routes';
import { crawlFromV1, mapFromV1, mapLinksV1, scrapeFromV1 } from './firecrawl-v1';

type Json = Record<string, unknown>;

/**
 * Firecrawl's API (scrape, batch scrape, crawl, map; a started job's routes are
 * firecrawl-jobs.controller.ts'), as thin adapters: a v1 request first put in v2's shape
 * (firecrawl-v1.ts), each request's own fields type-checked (firecrawl-fields.ts), the request
 * translated (firecrawl-mapping.ts), checked by sift's own DTO, and handed to sift's own service.
 */
@ApiTags('firecrawl')
@ApiBearerAuth()
@Controller(FIRECRAWL_MOUNTS)
@UseGuards(AuthGuard)
export class FirecrawlController {
  constructor(
    private readonly pages: PageService,
    private readonly batch: BatchService,
    private readonly maps: MapService,
    private readonly admission: Admission,
    config: AppConfig,
  ) {
    this.proxies = new Set(config.proxies.keys());
  }

  /** The names of the operator's proxies, which Firecrawl's `proxy` and `location.country` may name. */
  private readonly proxies: ReadonlySet<string>;

  /** One page in the formats asked, from one fetch. */
  @BodyLimit(SMALL_BODY)
  @Post('scrape')
  @HttpCode(200)
  async firecrawlScrape(
    @CurrentCaller() caller: Caller,
    @Body() sent: Json,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const body = isV1(req) ? scrapeFromV1(sent ?? {}) : (sent ?? {});
    const { url, ...scrape } = body;
    await checkScrapeFields(scrape);
    const { options, wanted } = fetchOptionsOf(scrape, '', this.proxies);
    const fetchReq = await siftBody(FetchRequestDto, { url, ...options });
    const leave = this.admission.enter('fetch', caller);
    const gone = hangup(res);
    try {
      // Written once per cached answer and sent as bytes, as /v1/fetch sends its envelope.
      const json = await this.pages.fetchWritten(
        caller,
        fetchReq,
        gone.signal,
        `firecrawl ${JSON.stringify(wanted)}`,
        (e) => Buffer.from(JSON.stringify({ success: true, data: documentOf(e, wanted) })),
      );
      res
        .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': json.length })
        .end(json);
    } finally {
      gone.done();
      leave();
    }
  }

  /** Starts a batch scrape: a sift batch job. */
  @BodyLimit(JOB_BODY)
  @Post('batch/scrape')
  @HttpCode(200)
  async firecrawlBatchScrape(
    @CurrentCaller() caller: Caller,
    @Body() sent: Json,
    @Headers('x-idempotency-key') idemKey: string | undefined,
    @Req() req: Request,
  ): Promise<Json> {
    checkIdemKey(idemKey);
    const body = isV1(req) ? scrapeFromV1(sent ?? {}) : (sent ?? {});
    await checkScrapeFields(body);
    const submit = await siftBody(BatchSubmitDto, batchOf(body, this.proxies));
    const { job } = await inFirecrawlNames(() => this.batch.submit(caller, submit, idemKey));
    return { success: true, id: job.id, url: apiUrl(req, `batch/scrape/${job.id}`) };
  }

  /** Starts a crawl: a sift crawl job. */
  @BodyLimit(SMALL_BODY)
  @Post('crawl')
  @HttpCode(200)
  async firecrawlCrawl(
    @CurrentCaller() caller: Caller,
    @Body() sent: Json,
    @Req() req: Request,
  ): Promise<Json> {
    const body = isV1(req) ? crawlFromV1(sent ?? {}) : (sent ?? {});
    await checkCrawlFields(body);
    const submit = await siftBody(CrawlSubmitDto, crawlOf(body, this.proxies), 'scrapeOptions.');
    const { job } = await inFirecrawlNames(() => this.batch.submitCrawl(caller, submit), 'scrapeOptions.');
    return { success: true, id: job.id, url: apiUrl(req, `crawl/${job.id}`) };
  }

  /** A site's URLs: sift's map. */
  @BodyLimit(SMALL_BODY)
  @Post('map')
  @HttpCode(200)
  async firecrawlMap(
    @CurrentCaller() caller: Caller,
    @Body() sent: Json,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Json> {
    const v1 = isV1(req);
    const body = v1 ? mapFromV1(sent ?? {}) : (sent ?? {});
    await checkMapFields(body);
    const { options, ...rest } = mapOf(body);
    const mapReq = { ...(await siftBody(MapRequestDto, rest)), ...(options ? { options } : {}) };
    if (options) await siftBody(FetchRequestDto, { url: rest.url, ...options });
    const leave = this.admission.enter('fetch', caller);
    const gone = hangup(res);
    try {
      const { links } = await this.maps.map(caller, mapReq, gone.signal());
      if (v1) return { success: true, links: mapLinksV1(links) };
      return {
        success: true,
        links: links.map((l) => ({ url: l.url, ...(l.title ? { title: l.title } : {}) })),
      };
    } finally {
      gone.done();
      leave();
    }
  }
}
