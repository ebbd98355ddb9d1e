import { randomBytes, timingSafeEqual } from 'node:crypto';
import { connect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { tunnel, type EgressProxy } from '../fetch/egress';
import type { ProxyCounts, ProxyGate, ProxyLimits, ProxySession } from './render-proxy';

/**
 * Upstream connections one render may have open or being opened at once. Chromium keeps to 32
 * sockets per proxy server, so a page never meets this; a hostile client with the credentials would.
 */
export const MAX_SOCKETS = 64;

/** An upstream connection that has not connected by then is dropped (the render's deadline is the other bound). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A request the proxy refuses without connecting anywhere: 403, or 503 past MAX_SOCKETS; 502
 * `proxy_error` when the egress proxy failed (nothing connects around it).
 */
export class Refusal extends Error {
  constructor(
    readonly status: 403 | 502 | 503,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * One render's credentials, limits, counters and sockets. `open` is the only way to the network:
 * it asks the gate for the one checked address and connects to exactly that, so nothing here ever
 * resolves a name.
 */
export class Session implements ProxySession {
  readonly username = randomBytes(12).toString('hex');
  readonly password = randomBytes(32).toString('base64url');
  readonly counts: ProxyCounts = { requests: 0, blocked: 0, bytes: 0, hosts: 0, proxyFailed: 0 };
  private readonly secret = Buffer.from(this.password);
  private readonly hosts = new Set<string>();
  /** Upstream sockets and the client sockets that carried this session's requests. */
  private readonly sockets = new Set<Duplex>();
  private upstreams = 0;
  private readonly ended = new AbortController();
  private readonly onAbort = () => this.close();

  constructor(
    private readonly gate: ProxyGate,
    private readonly limits: ProxyLimits,
    private readonly signal: AbortSignal,
    private readonly forget: (s: Session) => void,
    /** The operator's egress proxy every upstream connection goes through, when the render names one. */
    private readonly egress?: EgressProxy,
  ) {
    if (signal.aborted) this.close();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  get closed(): boolean {
    return this.ended.signal.aborted;
  }

  /** Whether `pass` is this session's password (constant time). */
  accepts(pass: string): boolean {
    const given = Buffer.from(pass);
    return !this.closed && given.length === this.secret.length && timingSafeEqual(given, this.secret);
  }

  close(): void {
    if (this.closed) return;
    this.ended.abort();
    this.signal.removeEventListener('abort', this.onAbort);
    this.forget(this);
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** Destroyed with the session; forgotten once it closes by itself. */
  hold(socket: Duplex): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    if (this.sockets.has(socket)) return;
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Counts a request refused before it named a target (a malformed one). */
  refuse(reason: string): Refusal {
    this.counts.requests++;
    this.counts.blocked++;
    return new Refusal(403, reason);
  }

  /**
   * Counts a request and opens its upstream connection to the address the gate returns for
   * `host`, or throws a Refusal (counted blocked) without connecting anywhere.
   */
  async open(host: string, port: number): Promise<Socket> {
    this.counts.requests++;
    const refused = this.limitReached(host);
    if (refused) throw this.block(refused);
    this.upstreams++;
    let address: string;
    try {
      address = await this.gate.address(host, this.ended.signal);
    } catch (err) {
      this.upstreams--;
      throw this.block(new Refusal(403, reasonOf(err)));
    }
    // The gate's answer must be an address: a name here would be resolved by the socket itself.
    if (this.closed || isIP(address) === 0) {
      this.upstreams--;
      throw this.block(new Refusal(403, this.closed ? 'session_closed' : 'gate_not_an_address'));
    }
    if (!this.egress) return this.connect(address, port);
    try {
      const socket = this.counted(await tunnel(this.egress, address, port, this.ended.signal));
      this.hold(socket);
      return socket;
    } catch {
      this.upstreams--;
      this.counts.proxyFailed++;
      throw new Refusal(502, 'proxy_error');
    }
  }

  private limitReached(host: string): Refusal | undefined {
    const { maxRequests, maxBytes, maxHosts } = this.limits;
    if (this.closed) return new Refusal(403, 'session_closed');
    if (this.counts.requests > maxRequests) return new Refusal(403, 'too_many_requests');
    if (this.counts.bytes >= maxBytes) return new Refusal(403, 'too_large');
    if (this.upstreams >= MAX_SOCKETS) return new Refusal(503, 'too_many_connections');
    if (!this.hosts.has(host)) {
      if (this.hosts.size >= maxHosts) return new Refusal(403, 'too_many_hosts');
      // A host counts once the gate is asked about it: the cap bounds lookups too.
      this.hosts.add(host);
      this.counts.hosts = this.hosts.size;
    }
    return undefined;
  }

  private block(r: Refusal): Refusal {
    this.counts.blocked++;
    return r;
  }

  private connect(address: string, port: number): Socket {
    const socket = connect({ host: address, port });
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error('connect timeout')));
    socket.once('connect', () => socket.setTimeout(0));
    this.counted(socket);
    this.hold(socket);
    return socket;
  }

  /** An upstream socket, counted while open and by every byte that comes down. */
  private counted(socket: Socket): Socket {
    socket.setNoDelay(true);
    socket.once('close', () => this.upstreams--);
    // What an error means is handled where the socket is used, on its 'close'.
    socket.on('error', () => socket.destroy());
    // Every byte that comes down counts (for a plain request its head too): past the cap, cut.
    socket.on('data', (chunk: Buffer) => {
      this.counts.bytes += chunk.length;
      if (this.counts.bytes > this.limits.maxBytes) socket.destroy();
    });
    return socket;
  }
}

/** A refusal's reason as the X-Sift-Refused header says it: the gate's error code, or `gate_error`. */
function reasonOf(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? code : 'gate_error';
}
