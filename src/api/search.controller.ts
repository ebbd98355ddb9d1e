import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiSchema, ApiTags } from '@nestjs/swagger';
import { SearchRequestDto } from '../commands';
import type { SearchHit } from '../dcache';
import { SearchService } from '../batch/search.service';
import type { Caller } from '../pages/caller-policy';
import { Admission } from './admission';
import { ApiErrors } from './api-errors.decorator';
import { AuthGuard } from './auth.guard';
import { BodyLimit, SMALL_BODY } from './body-limit';
import { CurrentCaller } from './caller.decorator';

@ApiSchema({ name: 'SearchHitDto' })
class SearchHitView implements SearchHit {
  @ApiProperty({ example: 'https://docs.example.com/install' }) url: string;
  @ApiProperty({ example: 'Install' }) title: string;
  @ApiProperty({ description: 'Text of the page around the words found.' }) snippet: string;
  @ApiProperty({
    description:
      'How well it matched, higher is better: comparable within one answer (bm25 on SQLite, ts_rank on PostgreSQL).',
  })
  score: number;
  @ApiProperty({ type: String, nullable: true, description: 'The job whose result it is.' })
  job_id: string | null;
  @ApiProperty({ type: Number, nullable: true, description: "Its target's idx in that job." })
  idx: number | null;
}

@ApiSchema({ name: 'SearchResponseDto' })
class SearchResponse {
  @ApiProperty({ type: [SearchHitView], description: 'Best first.' }) hits: SearchHitView[];
}

/** POST /v1/search: the pages of the caller's own jobs, found by their words (SearchService). */
@ApiTags('search')
@ApiBearerAuth()
@Controller('v1')
@UseGuards(AuthGuard)
export class SearchController {
  constructor(
    private readonly searches: SearchService,
    private readonly admission: Admission,
  ) {}

  @BodyLimit(SMALL_BODY)
  @Post('search')
  @HttpCode(200)
  @ApiOkResponse({ type: SearchResponse })
  @ApiErrors(400, 401, 413, 415, 429, 503)
  async search(@CurrentCaller() caller: Caller, @Body() body: SearchRequestDto): Promise<SearchResponse> {
    // A search holds one of the caller's places as a fetch does.
    const leave = this.admission.enter('fetch', caller);
    try {
      return await this.searches.search(caller, body);
    } finally {
      leave();
    }
  }
}
