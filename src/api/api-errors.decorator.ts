import { applyDecorators } from '@nestjs/common';
import { ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorResponseDto } from './dto/responses.dto';

const DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request, too_many_targets',
  401: 'unauthorized (the body is never read)',
  403: 'forbidden, blocked_address',
  404: 'not_found',
  409: 'idempotency_conflict, not_cancellable',
  413: 'payload_too_large: /v1/fetch 64 KiB; /v1/batch 2 MiB restricted, 32 MiB fleet',
  415: 'unsupported_encoding: request bodies with a Content-Encoding are refused, never inflated',
  429: 'too_many_jobs, too_many_requests (with Retry-After)',
  502: 'dns_error, connect_error, tls_error, too_many_redirects, too_large, unsupported_content_type',
  503: 'server_busy, storage_full (with Retry-After)',
  504: 'timeout',
};

type Example = [code: string, message: string, hint: string];

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
      'alice already has 8 /v1/fetch calls in flight, the most a restricted caller may',
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
  const description = DESCRIPTIONS[status] ?? 'error';
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
