import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from './dto/responses.dto';

const DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request, too_many_targets',
  401: 'unauthorized',
  403: 'forbidden, blocked_address',
  404: 'not_found',
  409: 'idempotency_conflict, not_cancellable',
  413: 'payload_too_large',
  429: 'too_many_jobs (with Retry-After)',
  502: 'dns_error, connect_error, tls_error, too_many_redirects, too_large, unsupported_content_type',
  503: 'server_busy, storage_full (with Retry-After)',
  504: 'timeout',
};

/** Documents the error envelope for each status a route can answer with. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'error', type: ErrorResponseDto }),
    ),
  );
}
