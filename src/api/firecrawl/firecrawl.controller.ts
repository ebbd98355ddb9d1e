import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  Res,
  StreamableFile,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { BatchService } from '../../batch/batch.service';
import type { TargetResult } from '../../batch/views';
import { invalidRequest, notFound } from '../../common/errors';
import { MapService } from '../../crawl';
import type { Caller } from '../../pages/caller-policy';
import { PageService } from '../../pages/page.service';
import { Admission } from '../admission';
import { jsonInParts, listParts } from '../json-chunks';
import { TimeSlicer } from '../../common/time-slice';
import { hangup } from '../../common/hangup';
import { AuthGuard } from '../auth.guard';
import { BodyLimit, JOB_BODY, SMALL_BODY } from '../body-limit';
import { CurrentCaller } from '../caller.decorator';
import {
  BatchSubmitDto,
  checkIdemKey,
  CrawlSubmitDto,
  FetchRequestDto,
  MapRequestDto,
  MAX_INT32,
} from '../../commands';
import { siftBody } from './firecrawl-body';
import { checkCrawlFields, checkMapFields, checkScrapeFields } from './firecrawl-fields';
import {
  batchOf,
  crawlOf,
  documentOf,
  fetchOptionsOf,
  mapOf,
  statusOf,
  wantedOfEnvelope,
} from './firecrawl-mapping';

type Json = Record<string, unknown>;

/** Documents in one status page unless the caller's `limit` says fewer (1 to 100). */
const PAGE_DOCS = 100;

/**
 * Firecrawl's v2 API (scrape, batch scrape, crawl, map), as thin adapters: each request's own
 * fields are type-checked (firecrawl-fields.ts), the request translated (firecrawl-mapping.ts),
 * checked by sift's own DTO, and handed to sift's own service.
 */
@ApiTags('firecrawl')
@ApiBearerAuth()
@Controller('v2')
@UseGuards(AuthGuard)
export class FirecrawlController {
  constructor(
    private readonly pages: PageService,
    private readonly batch: BatchService,
    private readonly maps: MapService,
    private readonly admission: Admission,
  ) {}

  /** One page in the formats asked, from one fetch. */
  @BodyLimit(SMALL_BODY)
  @Post('scrape')
  @HttpCode(200)
  async firecrawlScrape(
    @CurrentCaller() caller: Caller,
    @Body() body: Json,
    @Res() res: Response,
  ): Promise<void> {
    const { url, ...scrape } = body ?? {};
    await checkScrapeFields(scrape);
    const { options, wanted } = fetchOptionsOf(scrape);
    const req = await siftBody(FetchRequestDto, { url, ...options });
    const leave = this.admission.enter('fetch', caller);
    const gone = hangup(res);
    try {
      // Written once per cached answer and sent as bytes, as /v1/fetch sends its envelope.
      const json = await this.pages.fetchWritten(
        caller,
        req,
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
    @Body() body: Json,
    @Headers('x-idempotency-key') idemKey: string | undefined,
    @Req() req: Request,
  ): Promise<Json> {
    checkIdemKey(idemKey);
    await checkScrapeFields(body ?? {});
    const submit = await siftBody(BatchSubmitDto, batchOf(body ?? {}));
    const { job } = await this.batch.submit(caller, submit, idemKey);
    return { success: true, id: job.id, url: `${baseOf(req)}/v2/batch/scrape/${job.id}` };
  }

  /** A batch scrape's status and a page of its documents; `next` reads the following page. */
  @Get('batch/scrape/:id')
  // Sent as JSON in parts (see status): documented as the object it is.
  @ApiOkResponse({ type: Object })
  firecrawlBatchScrapeStatus(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() q: Record<string, string>,
    @Req() req: Request,
  ): Promise<StreamableFile> {
    return this.status(caller, id, q, `${baseOf(req)}/v2/batch/scrape/${id}`, 'batch');
  }

  /** Starts a crawl: a sift crawl job. */
  @BodyLimit(SMALL_BODY)
  @Post('crawl')
  @HttpCode(200)
  async firecrawlCrawl(
    @CurrentCaller() caller: Caller,
    @Body() body: Json,
    @Req() req: Request,
  ): Promise<Json> {
    await checkCrawlFields(body ?? {});
    const submit = await siftBody(CrawlSubmitDto, crawlOf(body ?? {}), 'scrapeOptions.');
    const { job } = await this.batch.submitCrawl(caller, submit);
    return { success: true, id: job.id, url: `${baseOf(req)}/v2/crawl/${job.id}` };
  }

  /** A crawl's status and a page of its documents. */
  @Get('crawl/:id')
  // Sent as JSON in parts (see status): documented as the object it is.
  @ApiOkResponse({ type: Object })
  firecrawlCrawlStatus(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() q: Record<string, string>,
    @Req() req: Request,
  ): Promise<StreamableFile> {
    return this.status(caller, id, q, `${baseOf(req)}/v2/crawl/${id}`, 'crawl');
  }

  /** Cancels a crawl: sift's cancel; Firecrawl's answer. */
  @Delete('crawl/:id')
  async firecrawlCrawlCancel(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<Json> {
    const job = await this.batch.get(caller, id);
    if (job.kind !== 'crawl') throw notFound('crawl');
    const after = await this.batch.cancel(caller, id);
    return { success: true, status: statusOf(after.status) };
  }

  /** A site's URLs: sift's map. */
  @BodyLimit(SMALL_BODY)
  @Post('map')
  @HttpCode(200)
  async firecrawlMap(
    @CurrentCaller() caller: Caller,
    @Body() body: Json,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Json> {
    await checkMapFields(body ?? {});
    const { options, ...rest } = mapOf(body ?? {});
    const mapReq = { ...(await siftBody(MapRequestDto, rest)), ...(options ? { options } : {}) };
    if (options) await siftBody(FetchRequestDto, { url: rest.url, ...options });
    const leave = this.admission.enter('fetch', caller);
    const gone = hangup(res);
    try {
      const { links } = await this.maps.map(caller, mapReq, gone.signal());
      return {
        success: true,
        links: links.map((l) => ({ url: l.url, ...(l.title ? { title: l.title } : {}) })),
      };
    } finally {
      gone.done();
      leave();
    }
  }

  private async status(
    caller: Caller,
    id: string,
    q: Record<string, string>,
    self: string,
    kind: 'batch' | 'crawl',
  ): Promise<StreamableFile> {
    const after = intParam('after', q.after, -1) ?? -1;
    const limit = intParam('limit', q.limit, 1, PAGE_DOCS) ?? PAGE_DOCS;
    const job = await this.batch.get(caller, id);
    if (job.kind !== kind) throw notFound(kind === 'batch' ? 'batch scrape' : 'crawl');
    const page = await this.batch.resultsPage(caller, id, { after, limit, statuses: ['done'] });
    // Each stored envelope is read and its document written apart, a slice at a time: a page of
    // large documents parsed and written as one held the event loop for over 100 ms.
    const slicer = new TimeSlicer();
    const docs: string[] = [];
    for (const item of page.groups.flat()) {
      const t = JSON.parse(item) as TargetResult;
      if (t.result !== null) docs.push(JSON.stringify(documentOf(t.result, wantedOfEnvelope(t.result))));
      if (slicer.due()) await slicer.turn();
    }
    const more = limit !== PAGE_DOCS ? `&limit=${limit}` : '';
    const head = JSON.stringify({
      success: true,
      status: statusOf(job.status),
      total: job.targets_total,
      completed: job.targets_done,
      expiresAt: job.lease_expires_at,
      next: page.next === null ? null : `${self}?after=${page.next}${more}`,
    });
    return jsonInParts(listParts(`${head.slice(0, -1)},"data":[`, docGroups(docs), ']}'));
  }
}

/** Documents in groups of about a mebibyte of JSON, for jsonInParts. */
function docGroups(docs: string[]): string[][] {
  const groups: string[][] = [];
  let size = Infinity;
  for (const d of docs) {
    if (size + d.length > 1024 * 1024) {
      groups.push([]);
      size = 0;
    }
    groups[groups.length - 1].push(d);
    size += d.length;
  }
  return groups;
}

/** This server's base URL as the caller reached it. */
function baseOf(req: Request): string {
  return `${req.protocol}://${req.get('host')}`;
}

function intParam(name: string, v: string | undefined, min: number, max = MAX_INT32): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || n < min || n > max)
    throw invalidRequest(`${name} must be an integer from ${min} to ${max}`, 'use the next URL as given');
  return n;
}
