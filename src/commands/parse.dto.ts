import { PickType } from '@nestjs/swagger';
import { FetchOptionsDto } from './fetch.dto';

/**
 * POST /v1/parse's options: a fetch's that apply to a file sent (its formats, caps, tokens,
 * chunks, selectors, a PDF's pages, the time it may take); none that reach a URL.
 */
export class ParseOptionsDto extends PickType(FetchOptionsDto, [
  'format',
  'formats',
  'timeout_ms',
  'max_bytes',
  'tokens',
  'max_tokens',
  'chunk_tokens',
  'chunk_overlap',
  'links',
  'include_selectors',
  'exclude_selectors',
  'pages',
  'ocr',
] as const) {}
