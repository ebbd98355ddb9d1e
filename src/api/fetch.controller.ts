import { Body, Controller, Header, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from './api-errors.decorator';
import { FetchResponseDto } from './dto/responses.dto';
import { FetchService, type Caller } from '../fetch/fetch.service';
import { AuthGuard } from './auth.guard';
import { CurrentCaller } from './caller.decorator';
import { FetchRequestDto } from './dto/fetch.dto';

@ApiTags('fetch')
@ApiBearerAuth()
@Controller('v1')
@UseGuards(AuthGuard)
export class FetchController {
  constructor(private readonly fetcher: FetchService) {}

  /** Fetches one URL and returns its main content in one envelope. */
  @Post('fetch')
  @HttpCode(200)
  @Header('Content-Type', 'application/json') // Express adds "; charset=utf-8"
  @ApiOkResponse({
    type: FetchResponseDto,
    description: 'The page, extracted; an upstream 4xx/5xx is still an envelope.',
  })
  @ApiErrors(400, 401, 403, 413, 502, 504)
  fetch(@CurrentCaller() caller: Caller, @Body() body: FetchRequestDto): Promise<string> {
    return this.fetcher.fetchJson(caller, body);
  }
}
