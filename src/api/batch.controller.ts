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
import {
  ApiBearerAuth,
  ApiHeader,
  ApiOkResponse,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiErrors } from './api-errors.decorator';
import {
  DeliveriesResponseDto,
  EventsResponseDto,
  JobListResponseDto,
  RedeliverResponseDto,
  ResultsPageDto,
} from './dto/responses.dto';
import { invalidRequest } from '../common/errors';
import { BatchService } from '../batch/batch.service';
import { EventView, JobView } from '../batch/views';
import type { Caller } from '../pages/caller-policy';
import { Admission } from './admission';
import { jsonInParts, listParts } from './json-chunks';
import { JobStreams } from './job-streams';
import { AuthGuard } from './auth.guard';
import { BodyLimit, JOB_BODY, TINY_BODY } from './body-limit';
import { CurrentCaller } from './caller.decorator';
import {
  BatchSubmitDto,
  checkIdemKey,
  DeleteQueryDto,
  DeliveriesQueryDto,
  EventsQueryDto,
  JobListQueryDto,
  MAX_INT32,
  RedeliverDto,
  ResultsQueryDto,
  statusQuery,
} from '../commands';
import { JOB_STATUSES, TARGET_STATUSES } from '../common/job-status';

function wants(req: Request, type: string): boolean {
  return (req.headers.accept ?? '').split(',').some((t) => t.trim().toLowerCase().startsWith(type));
}

@ApiTags('batch')
@ApiBearerAuth()
@Controller('v1/batch')
@UseGuards(AuthGuard)
export class BatchController {
  constructor(
    private readonly batch: BatchService,
    private readonly streams: JobStreams,
    private readonly admission: Admission,
  ) {}

  /** Submits a batch job; the job is stored before the 202 is sent. */
  @BodyLimit(JOB_BODY, { countsTargets: true })
  @Post()
  @HttpCode(202)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      "The same key with the same body within SIFT_IDEM_TTL_S of the job's last activity returns that job (200, Idempotent-Replayed: true) while it is queued, running, done or partial; once it has failed or been cancelled, the same key submits anew (a new job, 202). The same key with another body is 409 idempotency_conflict. Submit and retry follow this one rule.",
  })
  @ApiResponse({ status: 202, type: JobView, description: 'Stored; Location: /v1/batch/{id}.' })
  @ApiResponse({
    status: 200,
    type: JobView,
    description: 'Idempotent replay (Idempotent-Replayed: true).',
  })
  @ApiErrors(400, 401, 403, 409, 413, 415, 429, 503)
  async submitBatch(
    @CurrentCaller() caller: Caller,
    @Body() body: BatchSubmitDto,
    @Headers('idempotency-key') idemKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<JobView> {
    checkIdemKey(idemKey);
    const { job, replayed } = await this.batch.submit(caller, body, idemKey);
    res.setHeader('Location', `/v1/batch/${job.id}`);
    if (replayed) {
      res.status(200);
      res.setHeader('Idempotent-Replayed', 'true');
    }
    return job;
  }

  /** The caller's jobs, newest first, a page at a time (`after` the last page's `next`). */
  @Get()
  @ApiQuery(statusQuery(JOB_STATUSES, 'jobs', 'queued,running'))
  @ApiOkResponse({ type: JobListResponseDto })
  @ApiErrors(400, 401)
  listBatches(
    @CurrentCaller() caller: Caller,
    @Query() q: JobListQueryDto,
  ): Promise<{ jobs: JobView[]; next: string | null }> {
    if (q.after !== undefined && q.cursor !== undefined && q.after !== q.cursor) {
      throw invalidRequest(
        'after and cursor differ (cursor is the old name of after)',
        'send the next value of the previous page as after only',
      );
    }
    return this.batch.list(caller, { after: q.after ?? q.cursor, limit: q.limit ?? 20, statuses: q.status });
  }

  /** One job's state; reading it keeps the job alive. */
  @Get(':id')
  @ApiOkResponse({ type: JobView })
  @ApiErrors(401, 404)
  getBatch(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<JobView> {
    return this.batch.get(caller, id);
  }

  /**
   * Results in idx order, a page at a time (at most `limit` targets and about 8 MiB of JSON); with
   * Accept: application/x-ndjson, all of them streamed (with follow=true, each as it ends).
   */
  @Get(':id/results')
  @ApiQuery(statusQuery(TARGET_STATUSES, 'targets', 'failed,cancelled'))
  @ApiProduces('application/json', 'application/x-ndjson')
  @ApiOkResponse({
    type: ResultsPageDto,
    description:
      "A page stops at `limit` targets or about 8 MiB of JSON; `next` continues. With Accept: application/x-ndjson, one TargetResult per line: a live job's pending and running targets as they stand (status pending or running, result null), unless follow=true, which writes each target once it has ended, in idx order, and ends the stream when the job has ended.",
  })
  @ApiErrors(400, 401, 404, 429)
  async getBatchResults(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() q: ResultsQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StreamableFile | undefined> {
    if (!wants(req, 'application/x-ndjson')) {
      const { groups, next } = await this.batch.resultsPage(caller, id, {
        after: q.after ?? -1,
        limit: q.limit ?? 100,
        verdict: q.verdict,
        statuses: q.status,
      });
      return jsonInParts(listParts('{"results":[', groups, `],"next":${next}}`));
    }
    const leave = this.admission.enter('stream', caller);
    try {
      await this.streams.results(
        caller,
        id,
        { verdict: q.verdict, statuses: q.status },
        q.follow ?? false,
        res,
      );
    } finally {
      leave();
    }
    return undefined;
  }

  /** The job's events; with Accept: text/event-stream, a live stream that ends after the last one. */
  @Get(':id/events')
  @ApiProduces('application/json', 'text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'SSE: resume after this seq.' })
  @ApiOkResponse({
    type: EventsResponseDto,
    description:
      'With Accept: text/event-stream, a live stream (id: seq) that ends after the terminal event.',
  })
  @ApiResponse({
    status: 204,
    description:
      'Accept: text/event-stream on an ended job with no event after Last-Event-ID (or `after`): the SSE "stop", so an EventSource does not reconnect.',
  })
  @ApiErrors(400, 401, 404, 429)
  async getBatchEvents(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() q: EventsQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ events: EventView[]; next: number | null } | undefined> {
    if (!wants(req, 'text/event-stream')) return this.batch.events(caller, id, q.after ?? 0, q.limit ?? 1000);
    let after = q.after ?? 0;
    if (lastEventId !== undefined) {
      if (!/^\d{1,10}$/.test(lastEventId) || Number(lastEventId) > MAX_INT32)
        throw invalidRequest('Last-Event-ID must be an event seq', 'send the id of the last event received');
      after = Number(lastEventId);
    }
    const leave = this.admission.enter('stream', caller);
    try {
      await this.streams.events(caller, id, after, res);
    } finally {
      leave();
    }
    return undefined;
  }

  /**
   * Cancels a live job atomically (pending targets never run); with `purge=true`, deletes an ended
   * job with its results, events and deliveries instead.
   */
  @Delete(':id')
  @HttpCode(200)
  @ApiOkResponse({ type: JobView, description: 'Cancelled (again 200 for a cancelled job).' })
  @ApiResponse({ status: 204, description: 'purge=true: the job and every row of it are deleted.' })
  @ApiErrors(400, 401, 404, 409)
  async cancelBatch(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() q: DeleteQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<JobView | undefined> {
    if (!q.purge) return this.batch.cancel(caller, id);
    await this.batch.purge(caller, id);
    res.status(204);
    return undefined;
  }

  /**
   * A new job of the ended job's failed and cancelled targets (a cancelled job can be retried);
   * each result names its parent_idx.
   */
  @Post(':id/retry')
  @HttpCode(202)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      "The same key with the same body within SIFT_IDEM_TTL_S of the job's last activity returns that job (200, Idempotent-Replayed: true) while it is queued, running, done or partial; once it has failed or been cancelled, the same key submits anew (a new job, 202). The same key with another body is 409 idempotency_conflict. Submit and retry follow this one rule.",
  })
  @ApiResponse({ status: 202, type: JobView, description: 'Stored; Location: /v1/batch/{new id}.' })
  @ApiResponse({ status: 200, type: JobView, description: 'Idempotent replay (Idempotent-Replayed: true).' })
  @ApiErrors(400, 401, 404, 409, 429, 503)
  async retryBatch(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Headers('idempotency-key') idemKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<JobView> {
    checkIdemKey(idemKey);
    const { job, replayed } = await this.batch.retry(caller, id, idemKey);
    res.setHeader('Location', `/v1/batch/${job.id}`);
    if (replayed) {
      res.status(200);
      res.setHeader('Idempotent-Replayed', 'true');
    }
    return job;
  }

  /** The job's webhook deliveries in seq order: state, attempts, the last answer. */
  @Get(':id/deliveries')
  @ApiOkResponse({ type: DeliveriesResponseDto })
  @ApiErrors(400, 401, 404)
  getDeliveries(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() q: DeliveriesQueryDto,
  ): Promise<DeliveriesResponseDto> {
    return this.batch.deliveries(caller, id, q.after ?? 0, q.limit ?? 1000);
  }

  /** Sends the job's deliveries again from now, in seq order: those not delivered, or all. */
  @BodyLimit(TINY_BODY)
  @Post(':id/deliveries/redeliver')
  @HttpCode(202)
  @ApiResponse({ status: 202, type: RedeliverResponseDto })
  @ApiErrors(400, 401, 404)
  redeliver(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: RedeliverDto,
  ): Promise<RedeliverResponseDto> {
    return this.batch.redeliver(caller, id, body.all ?? false);
  }
}
