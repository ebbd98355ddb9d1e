import { SiftError } from '../common/errors';
import { ERROR_CODES, type ErrorCode } from '../common/error-codes';
import type { RunEnd } from './parser-process';

/**
 * Why a document failed, for the log and the tests; the caller sees the code, message and hint.
 * - `memory`: the parser ran out of its memory limit (its process died of it, or it said so);
 * - `deadline`: the parse did not finish within the time the request had left;
 * - `page_deadline`: one page (or opening the document) took longer than a page may;
 * - `cpu`: the document took more CPU time than one may (SIFT_PDF_MAX_CPU_MS);
 * - `crashed`: the parser's process died of anything else;
 * - `size`: an archive's part states or inflates to more than a document may (a zip bomb);
 * - `encrypted`: the document needs a password;
 * - `unreadable`: not a document the parser can open (broken beyond repair, or not of its type);
 * - `queued`: the request's time ran out before a parser was free to start on it.
 */
export type DocumentFailure =
  | 'memory'
  | 'deadline'
  | 'page_deadline'
  | 'cpu'
  | 'crashed'
  | 'size'
  | 'encrypted'
  | 'unreadable'
  | 'queued';

/** The codes a document fails with. */
export type DocumentErrorCode = Extract<
  ErrorCode,
  'document_too_complex' | 'unsupported_document' | 'timeout'
>;

/** A document sift could not turn into text, as the one exception filter answers it. */
export class DocumentError extends SiftError {
  constructor(
    code: DocumentErrorCode,
    message: string,
    hint: string,
    readonly failure: DocumentFailure,
  ) {
    super(ERROR_CODES[code][0], code, message, hint);
  }
}

/**
 * Out of memory or time while parsing, whichever limit it was: the document costs more than sift
 * spends on one. Time counts here too (not `timeout`): the parse was running, and a document that
 * needs longer than the request allows is too complex for it.
 */
export const tooComplex = (
  failure: 'memory' | 'deadline' | 'page_deadline' | 'cpu' | 'crashed' | 'size',
  detail: string,
) =>
  new DocumentError(
    'document_too_complex',
    `the document is too complex to parse: ${detail}`,
    failure === 'deadline'
      ? 'raise timeout_ms, or ask for fewer pages with the pages option'
      : failure === 'size'
        ? 'the file unpacks to more than sift reads of one document; it cannot be read by sift'
        : 'ask for fewer pages with the pages option; a document that fails this way on every page cannot be read by sift',
    failure,
  );

export const encrypted = () =>
  new DocumentError(
    'unsupported_document',
    'the document is encrypted and needs a password',
    'sift reads documents that open without a password; fetch an unprotected copy',
    'encrypted',
  );

export const unreadable = (detail: string) =>
  new DocumentError(
    'unsupported_document',
    `the document cannot be read: ${detail}`,
    'the file is damaged or not of the type it claims; fetch it with format "html" to see what the server sent',
    'unreadable',
  );

/** The request's time ran out while the document waited for a parser: nothing of it was parsed. */
export const queuedTooLong = (ms: number) =>
  new DocumentError(
    'timeout',
    `no document parser was free within ${ms} ms`,
    'sift is parsing other documents; try again, or raise timeout_ms',
    'queued',
  );

export const parserBusy = () =>
  new SiftError(
    503,
    'server_busy',
    'sift has as many documents waiting for a parser as it may queue',
    'try again in a few seconds',
  ).retryAfter(5);

/** sift is shutting down: the document was not (or not wholly) read. */
export const parserClosed = () =>
  new SiftError(
    503,
    'server_busy',
    'sift is shutting down: the document was not read',
    'try again shortly',
  ).retryAfter(5);

/** What a run that ended without a document means for the caller. */
export function failureOf(
  end: RunEnd,
  page: number,
  limits: { pageTimeoutMs: number; maxCpuMs: number },
): SiftError | Error {
  const where = page === 0 ? 'opening the document' : `page ${page}`;
  if ('fail' in end) {
    if (end.fail === 'encrypted') return encrypted();
    if (end.fail === 'unreadable') return unreadable(end.message);
    if (end.fail === 'too_large') return tooComplex('size', end.message);
    if (end.fail === 'cpu') return tooComplex('cpu', end.message);
    return tooComplex('memory', `${where} ran out of memory (${end.message})`);
  }
  if (end.killed === 'deadline') return tooComplex('deadline', `the time allowed ran out at ${where}`);
  if (end.killed === 'page_deadline')
    return tooComplex('page_deadline', `${where} took over ${limits.pageTimeoutMs} ms`);
  if (end.killed === 'cpu')
    return tooComplex('cpu', `it took over ${limits.maxCpuMs} ms of CPU time (at ${where})`);
  if (end.killed === 'closed') return parserClosed();
  if (end.killed === 'aborted') return new Error('the parse was stopped');
  const limit = /out of memory|allocation failed/i.test(end.stderr);
  const sig = end.signal && ['SIGSEGV', 'SIGABRT', 'SIGBUS', 'SIGTRAP', 'SIGILL'].includes(end.signal);
  return limit || sig
    ? tooComplex('memory', `the parser ran out of memory at ${where} (${end.signal ?? end.code})`)
    : tooComplex('crashed', `the parser died at ${where} (${end.signal ?? end.code})`);
}
