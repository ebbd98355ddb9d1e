import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A real HTTP server on 127.0.0.1 with named routes and a hit counter per path. */
export class Fixture {
  readonly hits = new Map<string, number>();
  private server?: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  port = 0;
  host = '127.0.0.1';

  constructor(private readonly routes: Record<string, Handler>) {}

  /** Listens on `host` (any 127.x address is this machine). */
  async start(host = '127.0.0.1'): Promise<this> {
    this.host = host;
    this.server = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      // A site has no robots.txt unless the fixture names one: a catch-all route does not answer it.
      const route =
        this.routes[path] ??
        (path === '/robots.txt'
          ? undefined
          : Object.entries(this.routes).find(
              ([p]) => p.endsWith('*') && path.startsWith(p.slice(0, -1)),
            )?.[1]);
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such fixture');
        return;
      }
      route(req, res);
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
    // A fixture a failed test left running must not keep the test process from exiting.
    this.server.unref();
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path: string, host = this.host): string {
    return `http://${host}:${this.port}${path}`;
  }

  hitCount(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

export const html = (body: string, title = 'Fixture page', headExtra = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${headExtra}</head><body>${body}</body></html>`;

export function articleHtml(title: string, paragraphs: number, word = 'lorem'): string {
  const ps = Array.from(
    { length: paragraphs },
    (_, i) =>
      `<p>Paragraph ${i} of the article about ${word}. It has enough words in it to be read as real content by the extractor, with commas, and more words, so that it scores.</p>`,
  ).join('\n');
  return html(
    `<nav><a href="/">Home</a> <a href="/news">News</a></nav><article><h1>${title}</h1>${ps}</article><footer>Copyright footer text</footer>`,
    title,
  );
}

export const send =
  (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type, ...headers });
    res.end(body);
  };

export const gzipped =
  (type: string, body: string | Buffer): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': type, 'content-encoding': 'gzip' });
    res.end(zlib.gzipSync(body));
  };

export const redirect =
  (location: string, status = 302): Handler =>
  (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };

/** An article page naming its own path, answered after `ms` (a page that takes time to serve). */
export const slowArticle =
  (ms: number, words = 'with several words in it.'): Handler =>
  (req, res) =>
    setTimeout(
      () => send(200, 'text/html', html(`<article><p>Body of ${req.url} ${words}</p></article>`))(req, res),
      ms,
    );
