import { FetchError, SiftError } from '../common/errors';

const TLS_CODES = /^(CERT_|ERR_TLS|ERR_SSL|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** The first system error code in an error's cause chain (aborts are not causes). */
function codeOf(err: unknown): string {
  let e = err as { code?: string; cause?: unknown } | undefined;
  for (let i = 0; e && i < 5; i++) {
    if (e.code && e.code !== 'UND_ERR_ABORTED' && e.code !== 'ABORT_ERR') return e.code;
    e = e.cause as typeof e;
  }
  return '';
}

/** What a failed upstream request is, in sift's codes: a timeout, DNS, TLS, or the connection. */
export function toFetchError(err: unknown, url: URL, timedOut: boolean, caller?: AbortSignal): SiftError {
  if (err instanceof SiftError) return err;
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof SiftError) return cause;
  if (caller?.aborted) return new SiftError(499, 'cancelled', 'the fetch was cancelled', 'nothing to do');
  const code = codeOf(err);
  const host = url.host;
  if (timedOut || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
    return new FetchError('timeout', `${host} did not answer in time`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_FAIL') {
    return new FetchError('dns_error', `${url.hostname} did not resolve (${code})`);
  }
  if (TLS_CODES.test(code)) return new FetchError('tls_error', `TLS with ${host} failed (${code})`);
  if (
    code === 'Z_DATA_ERROR' ||
    code === 'ERR__ERROR_FORMAT_PADDING_1' ||
    code.startsWith('Z_') ||
    code.startsWith('ERR_BROTLI')
  ) {
    return new FetchError('connect_error', `${host} sent a body that does not decode (${code})`);
  }
  return new FetchError('connect_error', `connecting to ${host} failed${code ? ` (${code})` : ''}`);
}
