import { MAX_URL_LENGTH } from '../common/urls';

/** Query parameters that only say where a click came from, besides any `utm_*`. */
const TRACKING = new Set(['gclid', 'fbclid', 'mc_cid', 'mc_eid', 'msclkid', 'dclid', 'yclid', '_ga']);

/** A query parameter that names a campaign or click, not the page: `utm_*` and the click ids. */
export function isTrackingParam(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('utm_') || TRACKING.has(lower);
}

/**
 * The form of a URL a crawl keeps once: two links that differ only in what this drops are the same
 * page. The WHATWG parser lower-cases scheme and host and drops a default port; here the fragment,
 * userinfo and tracking parameters go (the other parameters stay as written, in their order; a `?`
 * left empty goes too, and with `ignoreQuery` the whole query), `%xx` escapes are upper-cased, and a
 * trailing slash counts for nothing except on the root (`/docs/` is `/docs`). Undefined for anything
 * but an absolute http(s) URL of at most MAX_URL_LENGTH characters. With `keepPath` the path's
 * trailing slash stays: the URL a crawl fetches (a server may answer `/docs` and `/docs/` apart).
 */
export function canonicalUrl(
  raw: string | URL,
  o: { ignoreQuery?: boolean; keepPath?: boolean } = {},
): string | undefined {
  const text = typeof raw === 'string' ? raw : raw.href;
  if (text.length > MAX_URL_LENGTH) return undefined;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) return undefined;
  u.username = u.password = u.hash = '';
  u.search = o.ignoreQuery ? '' : keptQuery(u.search);
  let path = upperEscapes(u.pathname);
  if (path.length > 1 && path.endsWith('/') && !o.keepPath) path = path.slice(0, -1);
  u.pathname = path;
  const href = u.href;
  return href.length > MAX_URL_LENGTH ? undefined : href;
}

/** The query less tracking parameters and empty pieces, each other piece as written. */
function keptQuery(search: string): string {
  if (search.length <= 1) return '';
  const kept = search
    .slice(1)
    .split('&')
    .filter((piece) => piece !== '' && !isTrackingParam(paramName(piece)));
  return kept.length ? `?${upperEscapes(kept.join('&'))}` : '';
}

/** A piece's name, decoded as a form decodes it (`utm%5Fsource` is `utm_source`). */
function paramName(piece: string): string {
  const eq = piece.indexOf('=');
  const name = (eq < 0 ? piece : piece.slice(0, eq)).replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function upperEscapes(s: string): string {
  return s.replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase());
}
