/**
 * The commands every surface turns a request into: the DTOs of fetch, batch, crawl and map, the
 * results query, their validators and the one pipe that applies them. `/v1` runs the pipe on each
 * body; the Firecrawl routes run it on the body they translate; the MCP tools in process run it on
 * each call's arguments (the `sift mcp` tools and the CLI reach it through `/v1`). A layer of its
 * own, between `runner` and `mcp`/`api`, because those two sit side by side and may not import each
 * other: kept in either, the other would need a second copy of a limit, and a copy one day differs.
 */
import type { Type } from '@nestjs/common';
import { SiftValidationPipe } from './validation.pipe';

export { FetchOptionsDto, FetchRequestDto } from './fetch.dto';
export { BatchSubmitDto, RedeliverDto } from './batch.dto';
export { CrawlSubmitDto, LlmsTxtSubmitDto, MapRequestDto } from './crawl.dto';
export { CreateProfileDto } from './profile.dto';
export { CreateMonitorDto } from './monitor.dto';
export { SearchRequestDto } from './search.dto';
export { PARSE_OPTIONS, ParseOptionsDto } from './parse.dto';
export {
  DeleteQueryDto,
  DeliveriesQueryDto,
  EventsQueryDto,
  JobListQueryDto,
  MAX_INT32,
  ResultsQueryDto,
  statusQuery,
} from './query.dto';
export { checkIdemKey } from './validators';
export { SiftValidationPipe } from './validation.pipe';

const pipe = new SiftValidationPipe();

/**
 * `value` as the command `dto` describes, through the pipe `/v1` runs on a body (or a query), or
 * the same 400 invalid_request naming the fields.
 */
export function commandOf<T extends object>(
  dto: Type<T>,
  value: unknown,
  type: 'body' | 'query' = 'body',
): Promise<T> {
  return pipe.transform(value, { type, metatype: dto, data: '' }) as Promise<T>;
}
