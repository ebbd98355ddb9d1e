import * as net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 between one sift process and its database, that a test turns into the
 * faults a real network has: `cut()` resets every connection; `refuse()` stops listening (new
 * connections are refused) until `restore()`; `stall()` stops moving bytes both ways on every
 * connection, old and new, without closing any (a partition as it looks from each end) until
 * `restore()`.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private stalled = false;
  port = 0;

  constructor(
    private readonly upstreamPort: number,
    private readonly upstreamHost = '127.0.0.1',
  ) {}

  async start(port = 0): Promise<this> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
    // A proxy a failed test left running must not keep the test process from exiting.
    this.server.unref();
    return this;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.upstreamPort, this.upstreamHost);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    const close = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    upstream.pipe(client);
    if (this.stalled) this.pause(pair);
  }

  private pause([a, b]: [net.Socket, net.Socket]): void {
    a.unpipe(b);
    b.unpipe(a);
    a.pause();
    b.pause();
  }

  /** Connections open now. */
  get open(): number {
    return this.pairs.size;
  }

  /** Resets every connection open now (as a server or a firewall dropping them does). */
  cut(): void {
    for (const [a, b] of [...this.pairs]) {
      a.resetAndDestroy();
      b.resetAndDestroy();
    }
  }

  /** Resets every connection and refuses new ones until restore(). */
  async refuse(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    this.cut();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  /** Every connection, and each new one, goes silent: nothing is read or passed on, nothing closed. */
  stall(): void {
    this.stalled = true;
    for (const p of this.pairs) this.pause(p);
  }

  /** Back to passing bytes: listening again on the same port after refuse(), moving them after stall(). */
  async restore(): Promise<void> {
    if (this.stalled) {
      this.stalled = false;
      for (const [a, b] of this.pairs) {
        a.pipe(b);
        b.pipe(a);
      }
    }
    if (!this.server) await this.start(this.port);
  }

  async stop(): Promise<void> {
    this.cut();
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }
}
