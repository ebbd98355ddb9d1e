import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** Where a proxied request goes: the name (or IP literal, without brackets) the gate is asked about. */
export interface Target {
  host: string;
  port: number;
  /** The Host header the server is sent: the authority of the request target, never an address. */
  authority: string;
  /** Origin-form path and query, for plain requests. */
  path: string;
}

const CONNECT_AUTHORITY = /^(\[[0-9a-fA-F:.]+\]|[^\s:/@?#[\]\\]+):(\d{1,5})$/;

/**
 * `host:port` of a CONNECT, as Chromium sends it. The host goes through the WHATWG parser so the
 * gate sees one canonical spelling (`0x7f.1` → `127.0.0.1`, IDN → punycode, lower case).
 */
export function connectTarget(authority: string | undefined): Target | undefined {
  const m = CONNECT_AUTHORITY.exec(authority ?? '');
  if (!m) return undefined;
  const port = Number(m[2]);
  const url = tryUrl(`http://${m[1]}/`);
  if (!url || port < 1 || port > 65535) return undefined;
  return { host: bare(url.hostname), port, authority: `${url.hostname}:${port}`, path: '/' };
}

/** An absolute-form `http://host[:port]/path` request target (ws: too, for an Upgrade). */
export function absoluteTarget(raw: string | undefined, upgrade = false): Target | undefined {
  const url = raw?.includes('://') ? tryUrl(raw) : undefined;
  if (!url || !(url.protocol === 'http:' || (upgrade && url.protocol === 'ws:'))) return undefined;
  if (!url.hostname) return undefined;
  const port = url.port ? Number(url.port) : 80;
  return { host: bare(url.hostname), port, authority: url.host, path: `${url.pathname}${url.search}` };
}

function tryUrl(s: string): URL | undefined {
  try {
    return new URL(s);
  } catch {
    return undefined; // not a URL: the caller answers 400
  }
}

const bare = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/** Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never passed on. */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function dropped(connection: string | string[] | undefined, keepUpgrade: boolean): (name: string) => boolean {
  const named = new Set(
    String(connection ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  return (name) => {
    const n = name.toLowerCase();
    if (keepUpgrade && (n === 'connection' || n === 'upgrade')) return false;
    return HOP.has(n) || named.has(n);
  };
}

/**
 * The headers a plain request is forwarded with; Host is the target's authority (RFC 9112 3.2.2).
 * `Connection: close`: upstream connections are never reused, since each one is a gate call.
 */
export function requestHeaders(req: IncomingMessage, target: Target): IncomingHttpHeaders {
  const drop = dropped(req.headers.connection, false);
  const out: IncomingHttpHeaders = { host: target.authority, connection: 'close' };
  for (const [name, value] of Object.entries(req.headers)) {
    if (name !== 'host' && !drop(name)) out[name] = value;
  }
  return out;
}

/** A response's raw headers without hop-by-hop ones, as the flat list writeHead takes. */
export function responseHeaders(raw: string[], connection: string | string[] | undefined): string[] {
  const drop = dropped(connection, false);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!drop(raw[i])) out.push(raw[i], raw[i + 1]);
  return out;
}

/** The head of an Upgrade request as it goes upstream (Connection and Upgrade kept). */
export function upgradeHead(req: IncomingMessage, target: Target): string {
  const drop = dropped(undefined, true);
  const lines = [`${req.method} ${target.path} HTTP/1.1`, `Host: ${target.authority}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].toLowerCase() !== 'host' && !drop(raw[i])) lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

const REASONS: Record<number, string> = {
  200: 'Connection Established',
  400: 'Bad Request',
  403: 'Forbidden',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export const CHALLENGE = 'Basic realm="sift"';

/** An answer written straight to a socket the HTTP server has let go of (CONNECT, Upgrade, a parse error). */
export function rawAnswer(socket: Duplex, status: number, reason = ''): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const extra = status === 407 ? `Proxy-Authenticate: ${CHALLENGE}\r\n` : '';
  const tag = reason ? `X-Sift-Refused: ${reason}\r\n` : '';
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n${extra}${tag}Content-Length: 0\r\nConnection: close\r\n\r\n`,
  );
  // end() flushes the answer; a client that never reads it must not hold the socket.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** Credentials of a Proxy-Authorization: Basic header. */
export function basicCredentials(header: string | undefined): { user: string; pass: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=_-]{1,512})\s*$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), pass: decoded.slice(colon + 1) };
}
