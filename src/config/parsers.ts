import * as fs from 'node:fs';
import * as ipaddr from 'ipaddr.js';

/** A configuration that must not start; its message names the variable. */
export class ConfigError extends Error {}

export type CallerClass = 'fleet' | 'restricted';

export interface TokenEntry {
  token: string;
  caller: string;
  callerClass: CallerClass;
}

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const items = (raw: string) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** SIFT_TOKENS: `token:caller:class`, comma separated. A message never shows a token. */
export function parseTokens(raw: string): TokenEntry[] {
  const out: TokenEntry[] = [];
  for (const item of items(raw)) {
    const [token, caller, cls, ...rest] = item.split(':');
    if (!token || !caller || rest.length > 0 || (cls !== 'fleet' && cls !== 'restricted')) {
      throw new ConfigError(
        `SIFT_TOKENS entry "${item.replace(/^[^:]*/, '***')}" is invalid: expected token:caller:fleet|restricted`,
      );
    }
    if (token.length < 8)
      throw new ConfigError(`SIFT_TOKENS: the token of caller "${caller}" is shorter than 8 characters`);
    const other = out.find((t) => t.caller === caller && t.callerClass !== cls);
    if (other) {
      throw new ConfigError(
        `SIFT_TOKENS gives caller "${caller}" both classes: a caller name has one class (give the other token another name)`,
      );
    }
    out.push({ token, caller, callerClass: cls });
  }
  return out;
}

/** SIFT_FLEET_ALLOW: CIDRs or bare addresses (one address: /32, or /128), comma separated. */
export function parseCidrs(raw: string): Cidr[] {
  return items(raw).map((c) => {
    try {
      if (!c.includes('/') && ipaddr.isValid(c)) {
        const a = ipaddr.parse(c);
        return [a, a.kind() === 'ipv6' ? 128 : 32] as Cidr;
      }
      return ipaddr.parseCIDR(c);
    } catch {
      throw new ConfigError(
        `SIFT_FLEET_ALLOW entry "${c}" is neither an address nor a CIDR (for example 127.0.0.1, 10.0.0.0/8 or fd00::/8)`,
      );
    }
  });
}

/**
 * The first of `list` (paths separated by `:`) that is an executable file, or the list as given
 * when none is (so that what was looked for can be said).
 */
export function firstExecutable(list: string): string {
  return list.split(':').find((file) => file !== '' && isExecutable(file)) ?? list;
}

/** Whether `file` is there, a file, and executable. */
export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** An egress proxy the operator named (SIFT_PROXIES): HTTP CONNECT or SOCKS5. */
export interface EgressProxy {
  name: string;
  kind: 'http' | 'socks5';
  host: string;
  port: number;
  user?: string;
  pass?: string;
}

/**
 * `name=http://[user:pass@]host:port,other=socks5://host:port`: the proxies by name. A name is
 * letters, digits, `-` and `_`; anything else is the message of an Error (the config's check).
 */
export function parseProxies(v: string): Map<string, EgressProxy> {
  const out = new Map<string, EgressProxy>();
  for (const item of v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = item.indexOf('=');
    const name = item.slice(0, eq);
    if (eq <= 0 || !/^[A-Za-z0-9_-]{1,64}$/.test(name))
      throw new ConfigError(
        `SIFT_PROXIES: "${item.slice(0, 80)}" is not name=http://host:port or name=socks5://host:port`,
      );
    let u: URL;
    try {
      u = new URL(item.slice(eq + 1));
    } catch {
      throw new ConfigError(`SIFT_PROXIES: proxy "${name}" is not a URL`);
    }
    const kind = u.protocol === 'http:' ? 'http' : u.protocol === 'socks5:' ? 'socks5' : undefined;
    if (!kind || !u.port || u.pathname.replace(/\/$/, '') !== '' || u.search)
      throw new ConfigError(`SIFT_PROXIES: proxy "${name}" must be http://host:port or socks5://host:port`);
    if (out.has(name)) throw new ConfigError(`SIFT_PROXIES: proxy "${name}" is named twice`);
    out.set(name, {
      name,
      kind,
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: Number(u.port),
      ...(u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : {}),
    });
  }
  return out;
}

/** SIFT_<CLASS>_PROXIES: the proxy names a class may use, `*` for every one, `none` for none. */
export function parseProxyNames(raw: string): string[] | '*' {
  const v = raw.trim();
  return v === '*' ? '*' : v === 'none' ? [] : items(v);
}

/**
 * SIFT_SECRET_KEY: 32 bytes, as 64 hex digits or in base64; none when unset. The message of a bad
 * one never shows it.
 */
export function parseSecretKey(raw: string): Buffer | undefined {
  const v = raw.trim();
  if (!v) return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  // 32 bytes in base64 (or base64url) are 43 characters and one `=` of padding at most.
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(v))
    return Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  throw new ConfigError(
    'SIFT_SECRET_KEY must be 32 random bytes, as 64 hex digits or in base64 (openssl rand -hex 32)',
  );
}
