// Where the client finds sift: SIFT_URL, else the address the server itself listens on (SIFT_HOST
// and PORT, as `make run` reads them from .env or .env.example), else sift's default.
import { isIPv6 } from 'node:net';
import { originOf } from './env-file';

/** The server's defaults, as .env.example states them. */
const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = '8080';

export interface ServerUrl {
  url: string;
  /** How the URL was chosen ("from SIFT_URL", …), for a message that must say what to change. */
  from: string;
}

/**
 * A bind address as an address to connect to: a wildcard bind listens on loopback too, and an
 * IPv6 literal needs brackets in a URL.
 */
export function connectHost(bind: string): string {
  const host = bind.replace(/^\[(.*)\]$/, '$1');
  if (host === '0.0.0.0') return '127.0.0.1';
  if (isIPv6(host)) return /^[0:]+$/.test(host) ? '[::1]' : `[${host}]`;
  return host;
}

export function serverUrl(
  env: NodeJS.ProcessEnv = process.env,
  origin: (name: string) => string | undefined = originOf,
): ServerUrl {
  const url = env.SIFT_URL?.trim();
  if (url) return { url: url.replace(/\/+$/, ''), from: 'from SIFT_URL' };
  const host = env.SIFT_HOST?.trim();
  const port = env.PORT?.trim();
  if (!host && !port)
    return {
      url: `http://${DEFAULT_HOST}:${DEFAULT_PORT}`,
      from: 'the default: none of SIFT_URL, SIFT_HOST and PORT is set',
    };
  // Grouped by where each came from: "SIFT_HOST=0.0.0.0 and PORT=42080 in /srv/sift/.env".
  const byOrigin = new Map<string, string[]>();
  for (const [name, value] of [
    ['SIFT_HOST', host],
    ['PORT', port],
  ] as const) {
    if (!value) continue;
    const where = origin(name) ?? 'the environment';
    byOrigin.set(where, [...(byOrigin.get(where) ?? []), `${name}=${value}`]);
  }
  const from = `from ${[...byOrigin].map(([where, vars]) => `${vars.join(' and ')} in ${where}`).join(', ')}`;
  return { url: `http://${connectHost(host || DEFAULT_HOST)}:${port || DEFAULT_PORT}`, from };
}
