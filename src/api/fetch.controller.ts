import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { FetchService, type Caller, type FetchEnvelope } from '../fetch/fetch.service';
import { AuthGuard } from './auth.guard';
import { CurrentCaller } from './caller.decorator';
import { FetchRequestDto } from './dto/fetch.dto';

@Controller('v1')
@UseGuards(AuthGuard)
export class FetchController {
  constructor(private readonly fetcher: FetchService) {}

  /** Fetches one URL and returns its main content in one envelope. */
  @Post('fetch')
  @HttpCode(200)
  fetch(@CurrentCaller() caller: Caller, @Body() body: FetchRequestDto): Promise<FetchEnvelope> {
    return this.fetcher.fetch(caller, body);
  }
}
