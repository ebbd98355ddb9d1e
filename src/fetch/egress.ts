import { connect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { SocksClient as Socks } from 'socks';
import { SiftError } from '../common/errors';
import type { EgressProxy } from '../config/parsers';

export type { EgressProxy } from '../config/parsers';

/** Addresses and ports in a message (the proxy's, which a caller is not told). */
const ADDRESSES = /\[?[0-9a-f]*:[0-9a-f:.]+\]?(?::\d+)?|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?/gi;
/** How long a proxy may take to connect and open the tunnel. */
const HANDSHAKE_MS = 10_000;
/** How long TLS with the site may take inside a tunnel (undici's own connect timeout). */
const TLS_MS = 10_000;
/** The most of a CONNECT answer's head read before it is refused. */
const MAX_HEAD = 16 * 1024;

/** A proxy that could not be used: 502 `proxy_error` naming it, never a direct connection instead. */
export const proxyError = (name: string, why: string) =>
  new SiftError(
    502,
    'proxy_error',
    `the proxy "${name}" failed: ${why}`,
    'try again later, name another proxy, or ask the operator to check it; sift never connects directly instead',
  );

/**
 * A socket to `address:port` (an address sift has checked, never a name) through the proxy: a
 * CONNECT to the address, or a SOCKS5 connect by address. The target is asked of the proxy by
 * the address checked, so the proxy resolves nothing and the caller's policy holds through it.
 * Fails with proxy_error naming the proxy.
 */
export async function tunnel(
  p: EgressProxy,
  address: string,
  port: number,
  signal?: AbortSignal,
): Promise<Socket> {
  try {
    return p.kind === 'socks5'
      ? await socks(p, address, port, signal)
      : await httpConnect(p, address, port, signal);
  } catch (err) {
    if (err instanceof SiftError || signal?.aborted) throw err;
    // The proxy's own address is the operator's: a caller is told what failed, not where.
    const code = (err as { code?: unknown }).code;
    const why = typeof code === 'string' ? code : ((err as Error).message ?? '').replace(ADDRESSES, 'it');
    throw proxyError(p.name, why.slice(0, 200) || 'no answer');
  }
}

async function socks(p: EgressProxy, address: string, port: number, signal?: AbortSignal): Promise<Socket> {
  // Loaded on first use: a server with no SOCKS proxy never loads it.
  const { SocksClient } = require('socks') as { SocksClient: typeof Socks };
  const { socket } = await SocksClient.createConnection({
    proxy: { host: p.host, port: p.port, type: 5, userId: p.user, password: p.pass },
    command: 'connect',
    destination: { host: address, port },
    timeout: HANDSHAKE_MS,
  });
  if (signal?.aborted) {
    socket.destroy();
    throw signal.reason;
  }
  socket.setNoDelay(true);
  return socket;
}

function httpConnect(p: EgressProxy, address: string, port: number, signal?: AbortSignal): Promise<Socket> {
  const target = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  const auth =
    p.user !== undefined
      ? `proxy-authorization: Basic ${Buffer.from(`${p.user}:${p.pass ?? ''}`).toString('base64')}\r\n`
      : '';
  return new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: p.host, port: p.port });
    // Small writes go at once (as undici's own sockets do): Nagle's wait with a delayed ACK costs 40 ms a request.
    s.setNoDelay(true);
    let head = Buffer.alloc(0);
    const fail = (err: Error) => {
      cleanup();
      s.destroy();
      reject(err);
    };
    const onAbort = () => fail(signal!.reason as Error);
    const timer = setTimeout(() => fail(new Error('no tunnel in time')), HANDSHAKE_MS);
    const onError = (err: Error) => fail(new Error((err as { code?: string }).code ?? err.message));
    const onClose = () => fail(new Error('closed the connection'));
    // Read by 'readable', not 'data': once the handshake's listener is gone the socket is neither
    // flowing nor paused, and starts flowing for whoever reads the tunnel next.
    const onData = () => {
      for (let c: Buffer | null; (c = s.read() as Buffer | null) !== null;) head = Buffer.concat([head, c]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD) fail(new Error('an answer head too long'));
        return;
      }
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1];
      if (status !== '200')
        return fail(new Error(status ? `answered ${status} to CONNECT` : 'not an HTTP answer'));
      cleanup();
      // Bytes after the head are the target's: put back for whoever reads the tunnel next.
      const rest = head.subarray(end + 4);
      if (rest.length) s.unshift(rest);
      resolve(s);
    };
    const cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      s.off('readable', onData).off('error', onError).off('close', onClose);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    s.on('readable', onData).on('error', onError).on('close', onClose);
    s.once('connect', () => s.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n${auth}\r\n`));
  });
}

/** A connection's lookup, as AddressCheck.lookupFor gives it for a caller class. */
type Lookup = (
  hostname: string,
  options: { all?: boolean },
  cb: (err: Error | null, address: string | unknown[], family?: number) => void,
) => void;

/** What undici hands a connector, and what it takes back. */
type ConnectOptions = { hostname: string; protocol: string; port: string; servername?: string | null };
type Connected = (err: Error | null, socket: Socket | TLSSocket | null) => void;

/**
 * undici's connector for fetches through `p`: the host's address from the caller's checked lookup
 * (an IP literal was checked before the request), a tunnel to that address, and TLS over it with
 * the host's name (SNI and the certificate's check are the name's, not the proxy's).
 */
export function egressConnector(p: EgressProxy, lookup: Lookup) {
  return (opts: ConnectOptions, cb: Connected): void => {
    const host = opts.hostname.replace(/^\[|\]$/g, '');
    const https = opts.protocol === 'https:';
    const port = Number(opts.port) || (https ? 443 : 80);
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: Error | null, socket: Socket | TLSSocket | null, open?: Socket) => {
      clearTimeout(timer);
      if (done || err) open?.destroy();
      if (done) return;
      done = true;
      cb(err, err ? null : socket);
    };
    const address = isIP(host)
      ? Promise.resolve(host)
      : new Promise<string>((resolve, reject) =>
          lookup(host, {}, (err, a) => (err ? reject(err) : resolve(a as string))),
        );
    address
      .then((a) => tunnel(p, a, port))
      .then(
        (socket) => {
          if (!https) return finish(null, socket);
          // The handshake with the site, inside the tunnel, within the same time a direct one has.
          timer = setTimeout(
            () =>
              finish(
                Object.assign(new Error('TLS timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
                null,
                socket,
              ),
            TLS_MS,
          );
          const t = tlsConnect({
            socket,
            servername: isIP(host) ? undefined : opts.servername || host,
            ALPNProtocols: ['http/1.1'],
          });
          const failed = (err: Error) => finish(err, null, socket);
          t.once('error', failed);
          t.once('secureConnect', () => {
            t.off('error', failed);
            finish(null, t, socket);
          });
        },
        (err: Error) => finish(err, null),
      );
  };
}
