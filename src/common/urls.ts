/** The longest URL sift takes. */
export const MAX_URL_LENGTH = 8192;

/** An absolute http(s) URL, as the WHATWG parser reads it (its length is checked apart). */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/** The URL as the caller gave it, less any user:password@ (which is never sent upstream either). */
export function withoutUserinfo(raw: string): string {
  if (!raw.includes('@')) return raw;
  try {
    const u = new URL(raw);
    if (!u.username && !u.password) return raw;
    u.username = u.password = '';
    return u.href;
  } catch {
    return raw;
  }
}

/**
 * The host as per-host state knows it: the WHATWG parser has lower-cased it and made it IDNA
 * (punycode) already; a fully qualified name's trailing dot goes, so `news.test.` is `news.test`.
 */
export function normalHostname(hostname: string): string {
  let end = hostname.length;
  while (end > 0 && hostname.charCodeAt(end - 1) === 0x2e) end--;
  return end === hostname.length ? hostname : hostname.slice(0, end);
}

/** `host:port` of an absolute URL under its normal host name ('' when it is not one). */
export function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return normalHostname(u.hostname) + (u.port ? `:${u.port}` : '');
  } catch {
    return '';
  }
}
