import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/**
 * Every error code sift answers with, its HTTP status, and when it is given: the one list. The
 * error classes take only these codes, the OpenAPI enum and the per-status descriptions are read
 * from it. `cancelled` is never sent: the caller has gone.
 */
export const ERROR_CODES = {
  invalid_request: [400, 'the request is malformed or a field is out of range'],
  too_many_targets: [400, 'a job has more targets than the caller may send'],
  unauthorized: [401, 'no known bearer token (the body is never read)'],
  forbidden: [403, 'the caller may not do that'],
  blocked_address: [403, 'the URL resolves to an address the caller may not reach'],
  robots_denied: [403, "the site's robots.txt disallows the URL (the message quotes the rule)"],
  not_found: [404, 'no such job or route'],
  method_not_allowed: [405, 'the route does not take this method'],
  idempotency_conflict: [409, 'an Idempotency-Key was used for a different request'],
  not_cancellable: [409, 'the job has already ended'],
  not_retryable: [409, 'the job is still live, or none of its targets failed'],
  not_finished: [409, 'the job is still live: it cannot be purged'],
  profile_exists: [409, 'the caller already has a browser profile of that name'],
  profile_unreadable: [409, 'the browser profile was sealed with another SIFT_SECRET_KEY'],
  payload_too_large: [
    413,
    "the body is over the route's limit: /v1/fetch 64 KiB; /v1/batch 2 MiB restricted, 32 MiB fleet",
  ],
  unsupported_encoding: [415, 'request bodies with a Content-Encoding are refused, never inflated'],
  unsupported_media_type: [415, 'the body is not application/json'],
  selector_too_costly: [422, "the caller's selectors took over 1 s of work on the page (a page's limit)"],
  too_many_jobs: [429, 'the caller has as many live jobs as it may (with Retry-After)'],
  too_many_monitors: [429, 'the caller has as many monitors as it may'],
  too_many_requests: [429, 'the caller has as many calls or streams open as it may (with Retry-After)'],
  host_backoff: [429, 'the site asked sift to wait (a 429 or 503 with Retry-After); with Retry-After'],
  cancelled: [499, 'the caller went away'],
  internal: [500, "a fault of sift's own; the details are in its log, under the request id"],
  extraction_failed: [500, 'the extractor failed on the page; the details are in the log'],
  dns_error: [502, 'the host name did not resolve'],
  connect_error: [502, 'the server refused or dropped the connection'],
  tls_error: [502, 'the TLS handshake or certificate failed'],
  action_failed: [502, 'an action could not be taken on the rendered page (it closed, crashed or went away)'],
  proxy_error: [502, 'the egress proxy asked for (`proxy`) failed; sift never connects directly instead'],
  too_many_redirects: [502, 'more than 5 redirects, or a loop'],
  too_large: [502, 'the page is over the download cap'],
  unsupported_content_type: [502, 'not html, plain text, json or PDF'],
  document_too_complex: [
    502,
    "the document ran its parser out of memory (SIFT_PDF_MAX_MB) or of time (a page over 10 s, or the request's timeout_ms)",
  ],
  unsupported_document: [502, 'the document is encrypted, or broken past reading'],
  render_too_costly: [
    502,
    "the page took the browser's processes over SIFT_RENDER_MAX_MEMORY while it rendered (the browser is replaced)",
  ],
  server_busy: [503, 'sift is at its job or extraction limit (with Retry-After)'],
  storage_full: [503, 'the database is full; nothing was written (with Retry-After)'],
  storage_unavailable: [503, 'the database cannot be reached now; nothing was lost (with Retry-After)'],
  render_unavailable: [
    503,
    'no Chromium to render with: none at SIFT_CHROMIUM_PATH, or it will not start (with Retry-After)',
  ],
  timeout: [504, 'the server did not answer in time'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

/**
 * The codes that only the job machinery writes: a failed target's `error.code` (beside any code of
 * the list above that its fetch failed with) and an ended job's `error`. No HTTP answer carries them.
 */
export const RESULT_CODES = {
  invalid_url:
    'the target URL is not an absolute http(s) URL, kept as a failed target under ignore_invalid_urls',
  server_restarted: "sift restarted while the target or job was live, and the job's on_restart is fail",
  instance_lost: "the instance running the job stopped renewing its lease, and the job's on_restart is fail",
} as const satisfies Record<string, string>;

export type ResultCode = keyof typeof RESULT_CODES;

/** Every code a caller can read in an error envelope or a result: the OpenAPI enum. */
export const CALLER_CODES: readonly (ErrorCode | ResultCode)[] = [
  ...ERROR_CODE_LIST.filter((c) => c !== 'cancelled'),
  ...(Object.keys(RESULT_CODES) as ResultCode[]),
];

/** The codes answered with an HTTP status, for documenting a route. */
export function codesOf(status: number): ErrorCode[] {
  return ERROR_CODE_LIST.filter((c) => ERROR_CODES[c][0] === status);
}

/** The error envelope's body: what every 4xx and 5xx carries, and what a failed target holds. */
@ApiSchema({ name: 'ErrorBodyDto' })
export class ErrorBody {
  @ApiProperty({
    enum: CALLER_CODES,
    enumName: 'ErrorCode',
    example: 'invalid_request',
    description: `What went wrong, one of a fixed list. In a failed target also: ${Object.entries(
      RESULT_CODES,
    )
      .map(([c, when]) => `${c}, ${when}`)
      .join('; ')}.`,
  })
  code: string;

  @ApiProperty({ example: 'url must be an absolute http or https URL' })
  message: string;

  @ApiProperty({
    description: 'What to do next.',
    example: 'fix the named fields and send the request again',
  })
  hint: string;
}
