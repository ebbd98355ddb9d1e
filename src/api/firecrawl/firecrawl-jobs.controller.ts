import { Controller, Delete, Get, Param, Query, Req, StreamableFile, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { BatchService } from '../../batch/batch.service';
import type { TargetResult } from '../../batch/views';
import { invalidRequest, notFound } from '../../common/errors';
import { TimeSlicer } from '../../common/time-slice';
import type { Caller } from '../../pages/caller-policy';
import { MAX_INT32 } from '../../commands';
import { jsonInParts, listParts } from '../json-chunks';
import { AuthGuard } from '../auth.guard';
import { CurrentCaller } from '../caller.decorator';
import { apiUrl, FIRECRAWL_MOUNTS, isV1 } from './firecrawl-routes';
import { documentOf, statusOf, wantedOfEnvelope } from './firecrawl-mapping';

type Json = Record<string, unknown>;

/** Documents in one status page unless the caller's `limit` says fewer (1 to 100). */
const PAGE_DOCS = 100;
/** Active crawls listed at most (a caller's queued and running jobs, read a page at a time). */
const MAX_ACTIVE_LISTED = 1000;
/** Failed targets listed at most by an errors route. */
const MAX_ERRORS_LISTED = 10_000;

/**
 * Firecrawl's v2 routes over a batch scrape or a crawl once started: its status and documents, its
 * errors, its cancel, and the caller's active crawls. Each reads sift's own job, the caller's only.
 */
@ApiTags('firecrawl')
@ApiBearerAuth()
@Controller(FIRECRAWL_MOUNTS)
@UseGuards(AuthGuard)
export class FirecrawlJobsController {
  constructor(private readonly batch: BatchService) {}

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
    return this.status(caller, id, q, req, 'batch');
  }

  /** A batch scrape's failed pages, and those robots.txt kept it from. */
  @Get('batch/scrape/:id/errors')
  firecrawlBatchScrapeErrors(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<Json> {
    return this.errors(caller, id, 'batch');
  }

  /** A crawl's failed pages, and those robots.txt kept it from: Firecrawl's crawl errors. */
  @Get('crawl/:id/errors')
  firecrawlCrawlErrors(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<Json> {
    return this.errors(caller, id, 'crawl');
  }

  /** The caller's crawls not yet ended (queued or running), newest first: Firecrawl's active (v1: ongoing) crawls. */
  @Get(['crawl/active', 'crawl/ongoing'])
  async firecrawlActiveCrawls(@CurrentCaller() caller: Caller): Promise<Json> {
    const crawls: Json[] = [];
    let after: string | undefined;
    do {
      const page = await this.batch.list(caller, { after, limit: 100, statuses: ['queued', 'running'] });
      for (const job of page.jobs)
        if (job.kind === 'crawl')
          crawls.push({ id: job.id, teamId: caller.name, url: job.seed, options: null });
      after = page.next ?? undefined;
    } while (after && crawls.length < MAX_ACTIVE_LISTED);
    return { success: true, crawls: crawls.slice(0, MAX_ACTIVE_LISTED) };
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
    // v1 clients follow a batch scrape at its crawl's route too, as Firecrawl's v1 answers it.
    return this.status(caller, id, q, req, isV1(req) ? undefined : 'crawl');
  }

  /** Cancels a crawl: sift's cancel; Firecrawl's answer. */
  @Delete('crawl/:id')
  firecrawlCrawlCancel(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<Json> {
    return this.cancel(caller, id, 'crawl');
  }

  /** Cancels a batch scrape: sift's cancel; Firecrawl's answer. */
  @Delete('batch/scrape/:id')
  firecrawlBatchScrapeCancel(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<Json> {
    return this.cancel(caller, id, 'batch');
  }

  /**
   * The job's failed targets as Firecrawl lists them (`id` is the target's idx), those robots.txt
   * disallowed as `robotsBlocked`; at most MAX_ERRORS_LISTED in all, read a page at a time.
   */
  private async errors(caller: Caller, id: string, kind: 'batch' | 'crawl'): Promise<Json> {
    const job = await this.batch.get(caller, id);
    if (job.kind !== kind) throw notFound(kind === 'batch' ? 'batch scrape' : 'crawl');
    const errors: Json[] = [];
    const robotsBlocked: string[] = [];
    let after = -1;
    while (errors.length + robotsBlocked.length < MAX_ERRORS_LISTED) {
      const page = await this.batch.resultsPage(caller, id, { after, limit: 500, statuses: ['failed'] });
      for (const item of page.groups.flat()) {
        const t = JSON.parse(item) as TargetResult;
        if (t.error?.code === 'robots_denied') robotsBlocked.push(t.url);
        else
          errors.push({ id: String(t.idx), url: t.url, code: t.error?.code, error: t.error?.message ?? '' });
      }
      if (page.next === null) break;
      after = page.next;
    }
    const kept = Math.min(errors.length, MAX_ERRORS_LISTED);
    return {
      success: true,
      errors: errors.slice(0, kept),
      robotsBlocked: robotsBlocked.slice(0, MAX_ERRORS_LISTED - kept),
    };
  }

  private async cancel(caller: Caller, id: string, kind: 'batch' | 'crawl'): Promise<Json> {
    const job = await this.batch.get(caller, id);
    if (job.kind !== kind) throw notFound(kind === 'batch' ? 'batch scrape' : 'crawl');
    const after = await this.batch.cancel(caller, id);
    return { success: true, status: statusOf(after.status) };
  }

  /** A job's status and a page of its documents; `kind` undefined: either kind. */
  private async status(
    caller: Caller,
    id: string,
    q: Record<string, string>,
    req: Request,
    kind: 'batch' | 'crawl' | undefined,
  ): Promise<StreamableFile> {
    const after = intParam('after', q.after, -1) ?? -1;
    const limit = intParam('limit', q.limit, 1, PAGE_DOCS) ?? PAGE_DOCS;
    const job = await this.batch.get(caller, id);
    if (kind && job.kind !== kind) throw notFound(kind === 'batch' ? 'batch scrape' : 'crawl');
    const self = apiUrl(req, `${kind === 'batch' ? 'batch/scrape' : 'crawl'}/${id}`);
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
      // v1 clients follow `next` while the key is there: it is left out at the end.
      ...(page.next !== null
        ? { next: `${self}?after=${page.next}${more}` }
        : isV1(req)
          ? {}
          : { next: null }),
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

function intParam(name: string, v: string | undefined, min: number, max = MAX_INT32): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || n < min || n > max)
    throw invalidRequest(`${name} must be an integer from ${min} to ${max}`, 'use the next URL as given');
  return n;
}
