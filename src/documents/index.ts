export {
  DocumentParser,
  DEFAULT_MAX_CHARS,
  DEFAULT_PAGE_TIMEOUT_MS,
  defaultParserProcesses,
} from './document-parser';
export type { DocumentParserOptions, ParseOptions } from './document-parser';
export type { ParsedDocument } from './pdf-reader';
export type { DocumentMetadata } from './doc-metadata';
export type { OcrMode } from './ocr';
export { DocumentError, type DocumentErrorCode, type DocumentFailure } from './document-errors';
export { parsePageRanges, pageRangesError, MAX_PAGE_RANGES, type PageRange } from './page-ranges';
