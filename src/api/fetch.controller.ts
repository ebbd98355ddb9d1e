import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from './api-errors.decorator';
import { FetchEnvelope } from '../pages/envelope';
import { PageService } from '../pages/page.service';
import type { Caller } from '../pages/caller-policy';
import { Admission } from './admission';
import { AuthGuard } from './auth.guard';
import { BodyLimit, SMALL_BODY } from './body-limit';
import { CurrentCaller } from './caller.decorator';
import { hangup } from '../common/hangup';
import { FetchRequestDto } from '../commands';

@ApiTags('fetch')
@ApiBearerAuth()
@Controller('v1')
@UseGuards(AuthGuard)
export class FetchController {
  constructor(
    private readonly pages: PageService,
    private readonly admission: Admission,
  ) {}

  /** Fetches one URL and returns its main content in one envelope. */
  @BodyLimit(SMALL_BODY)
  @Post('fetch')
  @HttpCode(200)
  @ApiOkResponse({
    type: FetchEnvelope,
    description: 'The page, extracted; an upstream 4xx/5xx is still an envelope.',
  })
  @ApiErrors(400, 401, 403, 413, 415, 422, 429, 502, 503, 504)
  async fetch(
    @CurrentCaller() caller: Caller,
    @Body() body: FetchRequestDto,
    @Res() res: Response,
  ): Promise<void> {
    const leave = this.admission.enter('fetch', caller);
    // A caller that hangs up stops waiting; the shared fetch stops when nobody else waits for it.
    const gone = hangup(res);
    try {
      const json = await this.pages.fetchJson(caller, body, gone.signal);
      // Written as it is: the envelope is JSON already, and most of a cache hit's bytes are kept.
      res
        .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': json.length })
        .end(json);
    } finally {
      gone.done();
      leave();
    }
  }
}
