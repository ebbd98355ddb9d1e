import { Body, Controller, Get, HttpCode, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { LlmsTxtService } from '../../batch/llms-txt.service';
import { SiftError } from '../../common/errors';
import { hangup } from '../../common/hangup';
import { AppConfig } from '../../config/app-config';
import { LlmsTxtSubmitDto } from '../../commands';
import type { Caller } from '../../pages/caller-policy';
import { Admission } from '../admission';
import { AuthGuard } from '../auth.guard';
import { BodyLimit, SMALL_BODY } from '../body-limit';
import { CurrentCaller } from '../caller.decorator';
import { inFirecrawlNames, siftBody } from './firecrawl-body';
import { FirecrawlUnsupported } from './firecrawl-unsupported';

type Json = Record<string, unknown>;

/** Firecrawl's default maxUrls. */
const FIRECRAWL_MAX_URLS = 10;

/**
 * Firecrawl's v1 llms.txt generator (its v2 has none): a sift llms.txt job of `maxUrls` pages. Its
 * descriptions are the pages' own, not a language model's.
 */
@ApiTags('firecrawl')
@ApiBearerAuth()
@Controller('firecrawl/v1')
@UseGuards(AuthGuard)
export class FirecrawlLlmsTxtController {
  constructor(
    private readonly files: LlmsTxtService,
    private readonly admission: Admission,
    private readonly config: AppConfig,
  ) {}

  @BodyLimit(SMALL_BODY)
  @Post('llmstxt')
  @HttpCode(200)
  async firecrawlLlmsTxt(@CurrentCaller() caller: Caller, @Body() sent: Json): Promise<Json> {
    const { url, maxUrls, showFullText, cache, origin, ...rest } = sent ?? {};
    const other = Object.keys(rest)[0];
    if (other !== undefined) throw new FirecrawlUnsupported(other);
    if (showFullText !== undefined && typeof showFullText !== 'boolean')
      throw new FirecrawlUnsupported('showFullText', 'must be true or false');
    // The page cache is used as for any fetch; a client's own tag is not sift's business.
    if (cache !== undefined && typeof cache !== 'boolean')
      throw new FirecrawlUnsupported('cache', 'must be true or false');
    if (origin !== undefined && typeof origin !== 'string')
      throw new FirecrawlUnsupported('origin', 'must be a string');
    if (maxUrls !== undefined && (typeof maxUrls !== 'number' || !Number.isInteger(maxUrls) || maxUrls < 1))
      throw new FirecrawlUnsupported('maxUrls', 'must be a whole number of at least 1');
    const submit = await siftBody(LlmsTxtSubmitDto, { url, limit: maxUrls ?? FIRECRAWL_MAX_URLS });
    const { job } = await asMaxUrls(() =>
      inFirecrawlNames(() => this.files.submit(caller, submit, undefined, showFullText === true)),
    );
    return { success: true, id: job.id };
  }

  /** The job's status and its files so far (llms-full.txt when it was asked with showFullText). */
  @Get('llmstxt/:id')
  async firecrawlLlmsTxtStatus(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Json> {
    const leave = this.admission.enter('stream', caller);
    const gone = hangup(res);
    try {
      const stop = gone.signal();
      const { job, text } = await this.files.llmsTxt(caller, id, stop);
      let full: string | undefined;
      if (await this.files.askedFull(caller, id)) full = await this.fullText(caller, id, stop);
      const status =
        job.status === 'queued' || job.status === 'running'
          ? 'processing'
          : job.status === 'done' || job.status === 'partial'
            ? 'completed'
            : 'failed';
      return {
        success: true,
        status,
        data: { llmstxt: text, ...(full !== undefined ? { llmsfulltxt: full } : {}) },
        expiresAt: job.lease_expires_at,
        ...(status === 'failed' ? { error: job.error ?? `the job was ${job.status}` } : {}),
      };
    } finally {
      gone.done();
      leave();
    }
  }

  /**
   * llms-full.txt within the caller's output cap (one answer holds it whole): cut at a page's
   * end, with a last line that says where the whole file is.
   */
  private async fullText(caller: Caller, id: string, stop: AbortSignal): Promise<string> {
    const cap = this.config.limits[caller.callerClass].outputCap;
    let full = '';
    let bytes = 0;
    for await (const part of this.files.llmsFull(caller, id, stop)) {
      const n = Buffer.byteLength(part);
      if (bytes + n > cap) {
        return `${full}\n[cut at ${bytes} bytes, this server's cap on one answer: GET /v1/llmstxt/${id}/llms-full.txt has every page]\n`;
      }
      full += part;
      bytes += n;
    }
    return full;
  }
}

/** sift's `limit` is Firecrawl's maxUrls here. */
async function asMaxUrls<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof SiftError) err.message = err.message.replace(/^limit\b/, 'maxUrls');
    throw err;
  }
}
