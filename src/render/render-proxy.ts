import type { EgressProxy } from '../fetch/egress';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Refusal, Session } from './proxy-session';
import {
  absoluteTarget,
  basicCredentials,
  CHALLENGE,
  connectTarget,
  rawAnswer,
  requestHeaders,
  responseHeaders,
  upgradeHead,
  type Target,
} from './proxy-wire';

/** Where a render may connect: called for every new upstream connection (CONNECT or plain request). */
export interface ProxyGate {
  /** The one checked address to connect to for `host` (a name or an IP literal), or throws a
   *  SiftError (blocked_address, dns_error). The proxy connects to exactly this address. */
  address(host: string, signal: AbortSignal): Promise<string>;
}
export interface ProxyLimits {
  maxRequests: number;
  maxBytes: number;
  maxHosts: number;
}
export interface ProxyCounts {
  requests: number;
  blocked: number;
  bytes: number;
  hosts: number;
  /** Connections the egress proxy failed to open. */
  proxyFailed: number;
}
export interface ProxySession {
  readonly username: string;
  readonly password: string;
  /** Live counters: requests allowed+blocked, blocked, bytes down, distinct hosts asked about. */
  readonly counts: ProxyCounts;
  /** Ends the session: its open sockets are destroyed; its credentials are refused (407) afterwards. */
  close(): void;
}

/** Request heads past this are refused (431): a page cannot make the proxy buffer more. */
const MAX_HEADER_BYTES = 16 * 1024;
/** Client connections the proxy holds at once, over all sessions. */
const MAX_CONNECTIONS = 1024;

/**
 * The forward proxy every request of a rendered page goes through (SPEC "Rendering"). HTTP/1.1:
 * CONNECT tunnels (TLS and wss pass untouched) and absolute-form plain requests, WebSocket
 * Upgrade included. Each request must carry a live session's Basic credentials (else 407); the
 * session's gate resolves and checks the host and names the one address to connect to, so a
 * name is never resolved twice and DNS rebinding has nothing to swap. Upstream connections are
 * never pooled: each one is a fresh gate call.
 */
export class RenderProxy {
  private readonly sessions = new Map<string, Session>();
  private readonly clients = new Set<Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {
    server.on('connection', (s: Socket) => {
      this.clients.add(s);
      s.once('close', () => this.clients.delete(s));
      // After CONNECT or Upgrade the server lets go of the socket and its error handler with it.
      s.on('error', () => s.destroy());
    });
    server.on('clientError', (err: NodeJS.ErrnoException, s: Duplex) => {
      if (err.code === 'ECONNRESET') return s.destroy();
      const status =
        err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
      rawAnswer(s, status);
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      this.forward(req, res).catch(() => res.destroy());
    });
    server.on('connect', (req: http.IncomingMessage, s: Socket, head: Buffer) => {
      this.tunnel(req, s, head).catch(() => s.destroy());
    });
    server.on('upgrade', (req: http.IncomingMessage, s: Socket, head: Buffer) => {
      this.upgrade(req, s, head).catch(() => s.destroy());
    });
  }

  /** Listens on 127.0.0.1, an ephemeral port. */
  static async start(): Promise<RenderProxy> {
    const server = http.createServer({
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: 10_000,
      requestTimeout: 60_000,
      keepAliveTimeout: 5_000,
    });
    server.maxConnections = MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new RenderProxy(server, (server.address() as AddressInfo).port);
  }

  /** A session for one render. Requests past a limit are refused and counted blocked. */
  session(gate: ProxyGate, limits: ProxyLimits, signal: AbortSignal, egress?: EgressProxy): ProxySession {
    const s = new Session(gate, limits, signal, (done) => this.sessions.delete(done.username), egress);
    if (!s.closed) this.sessions.set(s.username, s);
    return s;
  }

  /** Closes every session and connection, then the listener. */
  async close(): Promise<void> {
    for (const s of [...this.sessions.values()]) s.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const c of this.clients) c.destroy();
    });
  }

  /** The live session whose credentials the request carries. */
  private authorized(req: http.IncomingMessage): Session | undefined {
    const creds = basicCredentials(req.headers['proxy-authorization']);
    const s = creds && this.sessions.get(creds.user);
    return s && s.accepts(creds.pass) ? s : undefined;
  }

  /** A plain `GET http://host/path`: forwarded over a fresh connection to the checked address. */
  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const s = this.authorized(req);
    if (!s) {
      res.writeHead(407, { 'proxy-authenticate': CHALLENGE, 'content-length': '0' }).end();
      return;
    }
    s.hold(req.socket);
    const target = absoluteTarget(req.url);
    if (!target) return refuse(res, s.refuse('bad_target'), 400);
    const up = await this.open(s, target, req.socket);
    if (up instanceof Refusal) return refuse(res, up);
    const out = http.request({
      createConnection: () => up,
      method: req.method,
      path: target.path,
      headers: requestHeaders(req, target),
    });
    out.on('response', (answer) => {
      const headers = responseHeaders(answer.rawHeaders, answer.headers.connection);
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
      answer.pipe(res);
      // Cut short (the cap, a reset): the client must not wait for the rest.
      answer.once('close', () => answer.complete || res.destroy());
    });
    out.on('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'x-sift-refused': 'connect_error', 'content-length': '0' }).end();
    });
    // The client went away before the answer ended: the upstream connection goes too.
    res.once('close', () => res.writableFinished || up.destroy());
    req.pipe(out);
  }

  /** `CONNECT host:port`: a byte tunnel to the checked address (TLS passes untouched). */
  private async tunnel(req: http.IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const s = this.authorized(req);
    if (!s) return rawAnswer(client, 407);
    s.hold(client);
    const target = connectTarget(req.url);
    if (!target) return rawAnswer(client, 400, s.refuse('bad_target').reason);
    const up = await this.open(s, target, client);
    if (up instanceof Refusal) return rawAnswer(client, up.status, up.reason);
    splice(client, up, 'HTTP/1.1 200 Connection Established\r\n\r\n', [head]);
  }

  /** A plain-HTTP Upgrade (WebSocket): its head goes to the checked address, then bytes both ways. */
  private async upgrade(req: http.IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const s = this.authorized(req);
    if (!s) return rawAnswer(client, 407);
    s.hold(client);
    const target = absoluteTarget(req.url, true);
    if (!target) return rawAnswer(client, 400, s.refuse('bad_target').reason);
    const up = await this.open(s, target, client);
    if (up instanceof Refusal) return rawAnswer(client, up.status, up.reason);
    splice(client, up, '', [Buffer.from(upgradeHead(req, target)), head]);
  }

  /**
   * The upstream socket for a target, or the Refusal to answer with (counted blocked). A client
   * that went away while the gate was asked leaves nothing connected.
   */
  private async open(s: Session, target: Target, client: Duplex): Promise<Socket | Refusal> {
    let up: Socket;
    try {
      up = await s.open(target.host, target.port);
    } catch (err) {
      if (err instanceof Refusal) return err;
      throw err;
    }
    if (!client.destroyed) return up;
    up.destroy();
    return new Refusal(403, 'client_gone');
  }
}

function refuse(res: http.ServerResponse, r: Refusal, status: number = r.status): void {
  res.writeHead(status, { 'x-sift-refused': r.reason, 'content-length': '0' }).end();
}

/**
 * Joins a client socket to its upstream once that connects: `toClient` (the 200 of a CONNECT) goes
 * down, `toUp` (an Upgrade's head, bytes the client sent early) goes up, then bytes flow both ways.
 * Either side closing closes the other; an upstream that never connected is a 502.
 */
function splice(client: Socket, up: Socket, toClient: string, toUp: Buffer[]): void {
  let joined = false;
  const join = () => {
    joined = true;
    if (toClient) client.write(toClient);
    for (const b of toUp) if (b.length) up.write(b);
    up.pipe(client);
    client.pipe(up);
  };
  // A tunnel through an egress proxy is connected when it is handed over.
  if (up.connecting) up.once('connect', join);
  else join();
  // An upstream that ended cleanly has had its end passed on by pipe (the client gets every byte).
  up.once('close', () => {
    if (!joined) rawAnswer(client, 502, 'connect_error');
    else if (!up.readableEnded) client.destroy();
  });
  client.once('close', () => up.destroy());
}
