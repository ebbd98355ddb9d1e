import { Controller, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Caller } from '../../pages/caller-policy';
import { UploadService } from '../../pages/upload.service';
import { Admission } from '../admission';
import { hangup } from '../../common/hangup';
import { AuthGuard } from '../auth.guard';
import { FileBodyLimit } from '../body-limit';
import { CurrentCaller } from '../caller.decorator';
import type { FileBody } from '../file-body';
import { PARSE_OPTIONS, ParseOptionsDto } from '../../commands';
import { siftBody } from './firecrawl-body';
import { checkScrapeFields } from './firecrawl-fields';
import { documentOf, fetchOptionsOf } from './firecrawl-mapping';

/**
 * Firecrawl's parse (v2): a file sent as multipart/form-data (parts `file` and `options`, a JSON
 * object of scrape options), answered as its scrape is. Its options are a scrape's, translated as
 * /v2/scrape translates them; those that only reach a URL (proxy, location, actions, maxAge) are
 * left out, as a file is not fetched.
 */
@ApiExcludeController()
@ApiBearerAuth()
@Controller(['v2', 'firecrawl/v2'])
@UseGuards(AuthGuard)
export class FirecrawlParseController {
  constructor(
    private readonly uploads: UploadService,
    private readonly admission: Admission,
  ) {}

  @FileBodyLimit()
  @Post('parse')
  @HttpCode(200)
  async firecrawlParse(
    @CurrentCaller() caller: Caller,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const body = req.body as FileBody;
    const scrape = (body.options ?? {}) as Record<string, unknown>;
    await checkScrapeFields(scrape);
    const { options, wanted } = fetchOptionsOf(scrape);
    const kept = Object.fromEntries(
      Object.entries(options).filter(([k]) => (PARSE_OPTIONS as readonly string[]).includes(k)),
    );
    const parse = await siftBody(ParseOptionsDto, kept);
    const leave = this.admission.enter('fetch', caller);
    const gone = hangup(res);
    try {
      const envelope = await this.uploads.parse(caller, body.upload, parse, gone.signal());
      const document = documentOf(envelope, wanted);
      const json = Buffer.from(JSON.stringify({ success: true, data: document }));
      res
        .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': json.length })
        .end(json);
    } finally {
      gone.done();
      leave();
    }
  }
}
