import { ERROR_CODES, type ErrorCode } from './error-codes';

/**
 * Typed errors: domain code throws these, and the one exception filter turns each into
 * {"error": {code, message, hint}} with its HTTP status.
 */
export class SiftError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }

  /** Headers the answer carries besides the envelope. */
  readonly headers: Record<string, string> = {};

  /** A header on the answer. */
  withHeader(name: string, value: string): this {
    this.headers[name] = value;
    return this;
  }

  /** Retry-After (seconds) on the answer. */
  retryAfter(s: number): this {
    return this.withHeader('Retry-After', String(s));
  }

  toJSON(): { code: string; message: string; hint: string } {
    return { code: this.code, message: this.message, hint: this.hint };
  }
}

export const invalidRequest = (
  message: string,
  hint = 'fix the request as the message says and send it again',
) => new SiftError(400, 'invalid_request', message, hint);

/** A file sent to be read (POST /v1/parse, MCP's parse) is over SIFT_PDF_MAX_BYTES. */
export const fileTooLarge = (limit: number) =>
  new SiftError(
    413,
    'payload_too_large',
    `the file is over the ${limit} bytes a document may be (SIFT_PDF_MAX_BYTES)`,
    'send a smaller file, or ask the operator to raise SIFT_PDF_MAX_BYTES',
  );

export const notFound = (what = 'resource') =>
  new SiftError(
    404,
    'not_found',
    `no such ${what}`,
    'check the id; jobs of other callers and swept jobs are not visible',
  );

export const forbidden = (message: string, hint: string) => new SiftError(403, 'forbidden', message, hint);

/** Fetch failures, each with a hint that says what to do; the status is the code's. */
const FETCH_HINTS = {
  blocked_address:
    'the name does not resolve, or resolves to an address this caller may not reach (private, loopback, link-local or reserved)',
  dns_error: 'check the host name; it did not resolve',
  connect_error: 'the server refused or dropped the connection; check the URL and try again later',
  tls_error: "the server's TLS certificate or handshake failed; use a host with a valid certificate",
  too_many_redirects: 'the URL redirects more than 5 times or in a loop; request the final URL directly',
  too_large: 'the page is larger than the download cap; fetch a smaller resource',
  unsupported_content_type: 'sift extracts html, plain text, json and PDF; this URL serves something else',
  timeout: 'the server did not answer in time; raise timeout_ms (at most 120000) or try again later',
  invalid_request: 'send an absolute http or https URL',
} as const satisfies Partial<Record<ErrorCode, string>>;

export type FetchErrorCode = keyof typeof FETCH_HINTS;

export class FetchError extends SiftError {
  constructor(code: FetchErrorCode, message: string) {
    super(ERROR_CODES[code][0], code, message, FETCH_HINTS[code]);
  }
}

/**
 * A fault of sift's own, not of the page or the network: never retried in a batch, and the details
 * go to the log only. `extraction_failed`: the extractor threw or its worker died on a page.
 */
export class InternalFault extends Error {
  constructor(
    readonly code: Extract<ErrorCode, 'internal' | 'extraction_failed'>,
    message: string,
  ) {
    super(message);
  }
}

/** What a caller is told of an internal fault: its code, and a hint; the details stay in the log. */
export const INTERNAL_HINTS: Record<InternalFault['code'], [string, string]> = {
  internal: [
    'sift failed on this target; the details are in its log',
    'report it with the job id and target idx',
  ],
  extraction_failed: [
    'sift could not extract this page; the details are in its log',
    'fetch it with format "html", or report it with the job id and target idx',
  ],
};

/** The database refused a write because it is full (disk or its size limit). */
export function isStorageFull(err: unknown): boolean {
  for (
    let e = err as { code?: string; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    e = e.cause as typeof e, i++
  ) {
    if (e.code === 'SQLITE_FULL') return true;
  }
  return false;
}

export const storageFull = () =>
  new SiftError(
    503,
    'storage_full',
    'the database is full: nothing was written, and nothing stored before was lost',
    'try again later; the operator must free disk space or raise the database size limit',
  ).retryAfter(30);

/** Set on errors the PostgreSQL driver raised (dcache/connections.ts marks them). */
export const DATABASE_ERROR = Symbol.for('sift.databaseError');

/**
 * SQLSTATE classes and codes of a database that is away or stalled, not of a bad statement:
 * connection exceptions (08), the server shutting down or starting (57P01-57P03), too many
 * connections (53300), sift's own limits (statement, lock and idle-transaction timeouts), and a
 * deadlock or serialization failure still failing after its retries.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '57014',
  '55P03',
  '25P03',
  '40P01',
  '40001',
]);

/**
 * The database cannot be reached, or did not answer in time: the request or the write may succeed
 * once it is back. Only an error of the database's own counts (a PostgreSQL driver error that
 * carries no SQLSTATE, or one of those above; SQLite busy past its timeout), never a fetch's,
 * nor a bad statement or a full disk (see isStorageFull).
 */
export function isStorageUnavailable(err: unknown): boolean {
  if (err instanceof SiftError) return false;
  for (
    let e = err as { code?: unknown; cause?: unknown; [DATABASE_ERROR]?: boolean } | undefined, i = 0;
    e && typeof e === 'object' && i < 5;
    e = e.cause as typeof e, i++
  ) {
    if (e.code === 'SQLITE_BUSY') return true;
    if (e[DATABASE_ERROR]) {
      const code = typeof e.code === 'string' ? e.code : '';
      // pg's connection errors carry an errno (ECONNREFUSED…) or no code; statement errors a SQLSTATE.
      const sqlstate = /^[0-9A-Z]{5}$/.test(code) ? code : '';
      return sqlstate === '' || sqlstate.startsWith('08') || UNAVAILABLE_SQLSTATES.has(sqlstate);
    }
  }
  return false;
}

export const storageUnavailable = () =>
  new SiftError(
    503,
    'storage_unavailable',
    'the database cannot be reached now: nothing was written by this request, and nothing stored before was lost',
    'try again in a few seconds; the operator should check the database server',
  ).retryAfter(5);
