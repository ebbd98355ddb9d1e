import { Controller, HttpCode, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from './api-errors.decorator';
import { FetchEnvelope } from '../pages/envelope';
import { UploadService } from '../pages/upload.service';
import type { Caller } from '../pages/caller-policy';
import { Admission } from './admission';
import { AuthGuard } from './auth.guard';
import { FileBodyLimit } from './body-limit';
import { CurrentCaller } from './caller.decorator';
import { optionsOf, type FileBody } from './file-body';
import { hangup } from '../common/hangup';
import { commandOf, ParseOptionsDto } from '../commands';

@ApiTags('fetch')
@ApiBearerAuth()
@Controller('v1')
@UseGuards(AuthGuard)
export class ParseController {
  constructor(
    private readonly uploads: UploadService,
    private readonly admission: Admission,
  ) {}

  /**
   * Reads a file sent in the request (a PDF, an Office or OpenDocument file, html, text) and
   * returns it in the envelope /v1/fetch returns: as the body itself with its Content-Type, or as
   * the part "file" of multipart/form-data beside a part "options" (a JSON object of /v1/fetch's
   * options that apply to a file). Up to SIFT_PDF_MAX_BYTES; nothing is fetched or cached.
   */
  @FileBodyLimit()
  @Post('parse')
  @HttpCode(200)
  @ApiConsumes('multipart/form-data', 'application/octet-stream')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file'],
      properties: {
        file: { type: 'string', format: 'binary', description: 'The file.' },
        options: {
          type: 'string',
          description: 'A JSON object of options: format, formats, pages, max_bytes, max_tokens, tokens…',
          example: '{"format": "markdown"}',
        },
      },
    },
  })
  @ApiQuery({
    name: 'options',
    required: false,
    description: 'With the file as the body: the options, a JSON object.',
    example: '{"format":"text"}',
  })
  @ApiOkResponse({ type: FetchEnvelope, description: 'The file, read as a page of its type.' })
  @ApiErrors(400, 401, 403, 413, 415, 429, 502, 503, 504)
  async parse(
    @CurrentCaller() caller: Caller,
    @Req() req: Request,
    @Query('options') query: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const leave = this.admission.enter('fetch', caller);
    const gone = hangup(res);
    try {
      const body = req.body as FileBody;
      const options = await commandOf(ParseOptionsDto, body.options ?? optionsOf(query) ?? {});
      const json = await this.uploads.parseJson(caller, body.upload, options, gone.signal());
      res
        .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': json.length })
        .end(json);
    } finally {
      gone.done();
      leave();
    }
  }
}
