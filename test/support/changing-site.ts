import { createHash } from 'node:crypto';
import type * as http from 'node:http';
import { Fixture } from './fixture';

/**
 * A site whose pages the test changes: `/p/<name>` serves the text set for it as an article, with
 * an ETag, and answers 304 to a request that holds the current one; a page set to null answers
 * 404. It counts, per page, the bodies it sent and the 304s.
 */
export class ChangingSite {
  readonly fixture: Fixture;
  private readonly pages = new Map<string, string | null>();
  readonly bodies = new Map<string, number>();
  readonly notModified = new Map<string, number>();
  /** While true, requests wait (in `waiting`) until release(). */
  holding = false;
  readonly waiting: (() => void)[] = [];

  constructor() {
    this.fixture = new Fixture({
      '/p/*': (req, res) => {
        if (this.holding) {
          this.waiting.push(() => this.answer(req, res));
          return;
        }
        this.answer(req, res);
      },
    });
  }

  /** Lets every waiting request be answered, and stops holding new ones. */
  release(): void {
    this.holding = false;
    for (const go of this.waiting.splice(0)) go();
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const name = decodeURIComponent((req.url ?? '').split('?')[0].slice(3));
    const text = this.pages.get(name);
    if (text === undefined || text === null) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>Not here</h1></body></html>');
      return;
    }
    const tag = `"${createHash('sha256').update(text).digest('hex').slice(0, 16)}"`;
    if (req.headers['if-none-match'] === tag) {
      this.notModified.set(name, (this.notModified.get(name) ?? 0) + 1);
      res.writeHead(304, { etag: tag }).end();
      return;
    }
    this.bodies.set(name, (this.bodies.get(name) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag: tag }).end(articleOf(name, text));
  }

  async start(host = '127.0.0.1'): Promise<this> {
    await this.fixture.start(host);
    return this;
  }

  stop(): Promise<void> {
    return this.fixture.stop();
  }

  /** The page's text: one paragraph a line. null: the page is gone (404). */
  set(name: string, text: string | null): void {
    this.pages.set(name, text);
  }

  url(name: string): string {
    return this.fixture.url(`/p/${encodeURIComponent(name)}`);
  }

  count(map: Map<string, number>, name?: string): number {
    if (name !== undefined) return map.get(name) ?? 0;
    return [...map.values()].reduce((a, b) => a + b, 0);
  }
}

/** An article a reader extracts whole: a title, then a paragraph a line of `text`. */
export function articleOf(title: string, text: string): string {
  const ps = text
    .split('\n')
    .map((l) => `<p>${l}</p>`)
    .join('\n');
  return `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><article><h1>${title}</h1>\n${ps}\n</article><footer>Footer</footer></body></html>`;
}

/** A paragraph long enough to be read as content: `n` words about `topic`. */
export const para = (topic: string, n = 30) =>
  Array.from({ length: n }, (_, i) => (i === 0 ? `The ${topic}` : `word${i}`)).join(' ') + '.';
