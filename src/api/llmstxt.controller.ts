import { Body, Controller, Get, Headers, HttpCode, Param, Post, Res, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiHeader,
  ApiOkResponse,
  ApiProduces,
  ApiProperty,
  ApiResponse,
  ApiSchema,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { LlmsTxtService } from '../batch/llms-txt.service';
import { JobView } from '../batch/views';
import { checkIdemKey, LlmsTxtSubmitDto } from '../commands';
import type { Caller } from '../pages/caller-policy';
import { Admission } from './admission';
import { ApiErrors } from './api-errors.decorator';
import { AuthGuard } from './auth.guard';
import { BodyLimit, SMALL_BODY } from './body-limit';
import { CurrentCaller } from './caller.decorator';
import { JobStreams } from './job-streams';
import { hangup } from '../common/hangup';

@ApiSchema({ name: 'LlmsTxtViewDto' })
class LlmsTxtView {
  @ApiProperty({ type: JobView, description: 'The job as it stood when its pages were read.' }) job: JobView;
  @ApiProperty({
    description:
      "The site's llms.txt from the pages read so far (every page once the job has ended): a `# ` title, a `> ` summary, `## ` sections of `- [title](url): description` lines.",
  })
  llms_txt: string;
  @ApiProperty({ description: 'Pages it lists.' }) pages: number;
}

/**
 * POST /v1/llmstxt: a crawl (kind llmstxt) whose pages make the site's llms.txt and
 * llms-full.txt; it is watched, cancelled and purged through the /v1/batch routes like any job.
 */
@ApiTags('crawl')
@ApiBearerAuth()
@Controller('v1/llmstxt')
@UseGuards(AuthGuard)
export class LlmsTxtController {
  constructor(
    private readonly files: LlmsTxtService,
    private readonly streams: JobStreams,
    private readonly admission: Admission,
  ) {}

  @BodyLimit(SMALL_BODY)
  @Post()
  @HttpCode(202)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'As for POST /v1/batch: the same key with the same body returns the job it made.',
  })
  @ApiResponse({ status: 202, type: JobView, description: 'Stored; Location: /v1/llmstxt/{id}.' })
  @ApiResponse({ status: 200, type: JobView, description: 'Idempotent replay (Idempotent-Replayed: true).' })
  @ApiErrors(400, 401, 403, 409, 413, 415, 429, 503)
  async submitLlmsTxt(
    @CurrentCaller() caller: Caller,
    @Body() body: LlmsTxtSubmitDto,
    @Headers('idempotency-key') idemKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<JobView> {
    checkIdemKey(idemKey);
    const { job, replayed } = await this.files.submit(caller, body, idemKey);
    res.setHeader('Location', `/v1/llmstxt/${job.id}`);
    if (replayed) {
      res.status(200);
      res.setHeader('Idempotent-Replayed', 'true');
    }
    return job;
  }

  /** The job and its llms.txt. */
  @Get(':id')
  @ApiOkResponse({ type: LlmsTxtView })
  @ApiErrors(401, 404, 429)
  async getLlmsTxt(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<LlmsTxtView> {
    const leave = this.admission.enter('stream', caller);
    const gone = hangup(res);
    try {
      const { job, text, pages } = await this.files.llmsTxt(caller, id, gone.signal());
      return { job, llms_txt: text, pages };
    } finally {
      gone.done();
      leave();
    }
  }

  /** llms.txt as a file. */
  @Get(':id/llms.txt')
  @ApiProduces('text/plain')
  @ApiOkResponse({ type: String, description: 'The same text as the llms_txt of GET /v1/llmstxt/{id}.' })
  @ApiErrors(401, 404, 429)
  async getLlmsTxtFile(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const leave = this.admission.enter('stream', caller);
    const gone = hangup(res);
    try {
      const { text } = await this.files.llmsTxt(caller, id, gone.signal());
      gone.done();
      await this.streams.text(one(text), res);
    } finally {
      gone.done();
      leave();
    }
  }

  /** llms-full.txt, streamed: each page's markdown under its title and URL. */
  @Get(':id/llms-full.txt')
  @ApiProduces('text/plain')
  @ApiOkResponse({
    type: String,
    description:
      "The head of llms.txt, then each page read (in the job's order): `# title`, `Source: url`, its markdown.",
  })
  @ApiErrors(401, 404, 429)
  async getLlmsFullFile(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    const leave = this.admission.enter('stream', caller);
    try {
      await this.streams.text(this.files.llmsFull(caller, id), res);
    } finally {
      leave();
    }
  }
}

async function* one(text: string): AsyncGenerator<string> {
  yield text;
}
