import * as http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** A new Standard Webhooks secret: whsec_ and 32 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export interface Received {
  id: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  payload: { type: string; job_id: string; seq: number; data: unknown; job: { id: string; status: string } };
}

/**
 * A webhook receiver on 127.0.0.1 that verifies every delivery with the standardwebhooks package
 * and keeps those that verify; `answer` decides each response's status.
 */
export class Receiver {
  readonly received: Received[] = [];
  readonly rejected: string[] = [];
  hits = 0;
  answer: (n: number) => number = () => 200;
  private server?: http.Server;
  port = 0;

  /**
   * `now`: the time deliveries are checked at (Unix ms), when the server runs on a test clock:
   * its webhook-timestamp is that clock's, and the library checks it against Date.now.
   */
  constructor(
    private readonly secret: string,
    private readonly now?: () => number,
  ) {}

  private verify(body: string, headers: Record<string, string>): void {
    const real = Date.now;
    if (this.now) Date.now = this.now;
    try {
      new Webhook(this.secret).verify(body, headers);
    } finally {
      Date.now = real;
    }
  }

  async start(port = 0): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const n = this.hits++;
        try {
          this.verify(body, req.headers as Record<string, string>);
          this.received.push({
            id: String(req.headers['webhook-id']),
            headers: req.headers,
            body,
            payload: JSON.parse(body),
          });
        } catch (err) {
          this.rejected.push((err as Error).message);
        }
        res.writeHead(this.answer(n), { 'content-type': 'text/plain' }).end(`answer ${n}`);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    // A receiver a failed test left running must not keep the test process from exiting.
    this.server.unref();
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Each delivery once (by webhook-id), in the order first received. */
  unique(): Received[] {
    const seen = new Set<string>();
    return this.received.filter((r) => !seen.has(r.id) && seen.add(r.id));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
