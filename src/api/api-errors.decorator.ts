import { applyDecorators } from '@nestjs/common';
import { ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ERROR_CODES, codesOf, type ErrorCode } from '../common/error-codes';
import { ErrorResponseDto } from './dto/responses.dto';

/** "code: when" for each code a status carries, read from the one list. */
const describe = (status: number) =>
  codesOf(status)
    .map((c) => `${c}: ${ERROR_CODES[c][1]}`)
    .join('; ');

type Example = [code: ErrorCode, message: string, hint: string];

/** One example envelope per code, for the statuses whose codes are less obvious. */
const EXAMPLES: Record<number, Example[]> = {
  413: [
    [
      'payload_too_large',
      'the body is over the 64 KiB this route accepts from this caller',
      'send a smaller body; split large batches into several jobs',
    ],
  ],
  415: [
    [
      'unsupported_encoding',
      'request bodies are not decoded: Content-Encoding "gzip" is refused',
      'send the JSON body without Content-Encoding (identity)',
    ],
  ],
  429: [
    [
      'too_many_requests',
      'alice already has 8 fetches in flight, the most a restricted caller may',
      'wait for one to finish, or send fewer at once',
    ],
    [
      'too_many_jobs',
      'alice already has 4 live jobs',
      'wait for a job to finish (or cancel one) and submit again',
    ],
  ],
  503: [
    [
      'server_busy',
      'sift has as many pages waiting for extraction as it may queue',
      'try again in a few seconds',
    ],
    [
      'storage_full',
      'the database is full: nothing was written, and nothing stored before was lost',
      'try again later; the operator must free disk space or raise the database size limit',
    ],
  ],
};

function response(status: number) {
  const description = describe(status) || 'error';
  const examples = EXAMPLES[status];
  if (!examples) return ApiResponse({ status, description, type: ErrorResponseDto });
  return ApiResponse({
    status,
    description,
    content: {
      'application/json': {
        schema: { $ref: getSchemaPath(ErrorResponseDto) },
        examples: Object.fromEntries(
          examples.map(([code, message, hint]) => [code, { value: { error: { code, message, hint } } }]),
        ),
      },
    },
  });
}

/** Documents the error envelope for each status a route can answer with. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(...statuses.map(response));
}
