/**
 * A caller's cookies for one request: bound to the URL asked (host-only, or the domain they name,
 * which must be the URL's own or one it is under), and sent to each hop as a cookie jar's rules
 * say, so a redirect to another site gets none. tough-cookie keeps the rules; this file is its one
 * door. A cookie's value is never logged and is in no answer: it is in the cache key only hashed.
 */
import { invalidRequest } from '../common/errors';
import type { BrowserCookie } from '../render/render-types';

/** Loaded on first use: a server whose callers send no cookies never holds it (1 MB of heap). */
const toughCookie = () => require('tough-cookie') as typeof import('tough-cookie');

/** A cookie as a caller sends it. */
export interface CookieSpec {
  name: string;
  value: string;
  domain?: string;
  path?: string;
}

/** `cookies` as sent: a Cookie header's value ("a=1; b=2"), or a list of cookies. */
export type CookiesAsk = string | CookieSpec[];

export interface Cookies {
  /** The Cookie header for `url`, or undefined when none of them goes there. */
  header(url: URL): string | undefined;
  /** The cookies for a render's browser, each scoped as the jar scopes it. */
  browser: BrowserCookie[];
  /** What tells two sets apart in a cache key. */
  key: string[];
}

/** The cookies of one request to `url`; a cookie that cannot be set for it is 400 naming it. */
export function cookiesOf(url: URL, ask: CookiesAsk | undefined): Cookies | undefined {
  const specs = typeof ask === 'string' ? fromHeader(ask) : (ask ?? []);
  if (specs.length === 0) return undefined;
  const { Cookie, CookieJar } = toughCookie();
  const jar = new CookieJar(undefined, { allowSpecialUseDomain: true, rejectPublicSuffixes: true });
  for (const [i, s] of specs.entries()) {
    const where =
      typeof ask === 'string' ? `cookies (${JSON.stringify(s.name.slice(0, 40))})` : `cookies.${i}`;
    if (!TOKEN.test(s.name) || !VALUE.test(s.value))
      throw invalidRequest(
        `${where} is not a valid cookie: a name of token characters and a value of cookie characters (no space, comma, semicolon or backslash)`,
        'send name=value pairs as a browser sends them',
      );
    try {
      const cookie = new Cookie({
        key: s.name,
        value: s.value,
        ...(s.domain !== undefined ? { domain: s.domain.replace(/^\./, '') } : {}),
        path: s.path ?? '/',
      });
      jar.setCookieSync(cookie, url.href);
    } catch (err) {
      throw invalidRequest(
        `${where} cannot be set for ${url.host}: ${(err as Error).message}`,
        "a cookie's domain must be the URL's host or a domain it is under",
      );
    }
  }
  const set = jar.getCookiesSync(url.href, { allPaths: true });
  return {
    header: (u) => jar.getCookieStringSync(u.href) || undefined,
    browser: set.map((c) =>
      c.hostOnly
        ? { name: c.key, value: c.value, url: `${url.protocol}//${url.host}${c.path ?? '/'}` }
        : { name: c.key, value: c.value, domain: `.${c.domain}`, path: c.path ?? '/' },
    ),
    key: set.map((c) => `${c.key}=${c.value};${c.hostOnly ? '' : c.domain};${c.path}`).sort(),
  };
}

/** RFC 6265: a cookie's name is a token; its value cookie-octets, or them in double quotes. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VALUE =
  /^(?:[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*|"[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*")$/;

/** A Cookie header's pairs. */
function fromHeader(header: string): CookieSpec[] {
  return header
    .split(';')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0
        ? { name: '', value: pair }
        : { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim() };
    });
}

/** A profile's cookies as a browser keeps them (its driver's storage state). */
export interface StoredCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix seconds; -1 for a session cookie. */
  expires: number;
  secure: boolean;
}

/**
 * A profile's cookies for a static fetch: each hop gets those a browser would send it (domain,
 * path, secure and expiry as the jar judges them); one the jar will not take is left out.
 */
export function storedCookies(stored: StoredCookie[]): (url: URL) => string | undefined {
  const { Cookie, CookieJar } = toughCookie();
  const jar = new CookieJar(undefined, { allowSpecialUseDomain: true, rejectPublicSuffixes: false });
  for (const c of stored) {
    const host = c.domain.replace(/^\./, '');
    try {
      const cookie = new Cookie({
        key: c.name,
        value: c.value,
        // Without a leading dot a cookie was the host's alone: set without a domain, it stays so.
        ...(c.domain.startsWith('.') ? { domain: host } : {}),
        path: c.path || '/',
        secure: c.secure,
        expires: c.expires > 0 ? new Date(c.expires * 1000) : 'Infinity',
      });
      jar.setCookieSync(cookie, `${c.secure ? 'https' : 'http'}://${host}${c.path || '/'}`);
    } catch {
      // Not one a browser would send anywhere: left out.
    }
  }
  return (u) => jar.getCookieStringSync(u.href) || undefined;
}

/** The request's cookies and a profile's together: each hop's Cookie header has both. */
export function withStored(
  own: Cookies | undefined,
  profile: { state?: { cookies: StoredCookie[] }; version: string } | undefined,
): Cookies | undefined {
  if (!profile?.state) return own;
  const stored = storedCookies(profile.state.cookies);
  const version = profile.version;
  return {
    header: (u) => [own?.header(u), stored(u)].filter(Boolean).join('; ') || undefined,
    browser: own?.browser ?? [],
    key: [...(own?.key ?? []), `profile ${version}`],
  };
}
