import { PickType } from '@nestjs/swagger';
import { FetchOptionsDto } from './fetch.dto';

/** The fetch options that apply to a file sent: its formats, caps, tokens, chunks, selectors, a PDF's pages, OCR, its time. */
export const PARSE_OPTIONS = [
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
] as const;

/** POST /v1/parse's options: PARSE_OPTIONS of a fetch's; none that reach a URL. */
export class ParseOptionsDto extends PickType(FetchOptionsDto, PARSE_OPTIONS) {}
