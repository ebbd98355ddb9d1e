// The site the Firecrawl clients' tests read (test/e2e/firecrawl*.spec.ts): a home page, two
// articles, a docs folder to crawl from a sub-path, a page of links, an echo and slow pages.
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { createTestApp } from './app';
import { Fixture, articleHtml, html, send, slowArticle, type Handler } from './fixture';

/** A page of the docs folder: a heading, words, and links to `to` in its navigation. */
const docsPage = (title: string, to: string[]) =>
  html(
    `<nav>${to.map((t) => `<a href="${t}">${t}</a>`).join(' ')}</nav><article><h1>${title}</h1><p>${`${title} words. `.repeat(40)}</p></article>`,
    title,
  );

const links = '<a href="/a">A</a> <a href="/b">B</a>';
/** /a as served. */
export const PAGE_A = articleHtml('Page A', 4, 'apples').replace('</article>', `${links}</article>`);

export const firecrawlSite = (): Record<string, Handler> => {
  let visits = 0;
  return {
    // A page that is another each time it is read: its visit number changes one line.
    '/visits': (req, res) =>
      send(
        200,
        'text/html',
        articleHtml('Visits', 4, 'visits').replace(
          '<h1>Visits</h1>',
          `<h1>Visits</h1><p>This page was read ${++visits} times by now, as its counter says.</p>`,
        ),
      )(req, res),
    // The home page links only to /a and /b: a crawl of it holds three pages, a map lists three URLs.
    '/': send(
      200,
      'text/html',
      html(`<nav>${links}</nav><article><h1>Home</h1><p>${'Home words. '.repeat(40)}</p></article>`, 'Home'),
    ),
    // An llms.txt naming the docs: a crawl or a map reads none unless asked, so Firecrawl's never
    // reach them from '/'.
    '/llms.txt': send(200, 'text/plain', '# Home\n\n- [Docs](/docs/): the manual\n'),
    '/a': send(200, 'text/html', PAGE_A),
    '/b': send(200, 'text/html', articleHtml('Page B', 4, 'bananas')),
    // A docs folder: the guide links up to /docs/ and across to /docs/api/, and down to its pages.
    '/docs/': send(200, 'text/html', docsPage('Docs', ['/docs/guide/', '/docs/api/'])),
    '/docs/api/': send(200, 'text/html', docsPage('API', ['/docs/'])),
    '/docs/guide/': send(
      200,
      'text/html',
      docsPage('Guide', ['/docs/', '/docs/api/', '/docs/guide/one', '/docs/guide/two/']),
    ),
    '/docs/guide/one': send(200, 'text/html', docsPage('Guide one', ['/docs/guide/', '/'])),
    '/docs/guide/two/': send(200, 'text/html', docsPage('Guide two', ['/docs/guide/one'])),
    // Links in its navigation, its article and its footer, one twice, one not http.
    '/linked': send(
      200,
      'text/html',
      html(
        `<header><nav><a href="/">Home</a> <a href="/docs/">Docs</a></nav></header><article><h1>Linked</h1>` +
          `<p>${'Linked words. '.repeat(30)}<a href="/a">A</a> and <a href="https://other.example/x?y=1">X</a>.</p></article>` +
          `<footer><a href="/docs/">Docs again</a> <a href="mailto:a@b.example">Mail</a> <a href="/about#team">About</a></footer>`,
        'Linked',
      ),
    ),
    // Taller than the viewport: a full page's screenshot is.
    '/tall': send(200, 'text/html', html('<div style="height:3000px">A tall page</div>', 'Tall')),
    // A page that shows the X-Fruit header it was asked with.
    '/echo': (req, res) =>
      send(200, 'text/html', articleHtml('Echo', 4, String(req.headers['x-fruit'] ?? 'none')))(req, res),
    // A page that takes its time: a crawl of it is still running when it is cancelled.
    '/slow/*': (req, res) => void setTimeout(() => slowArticle(0)(req, res), 3000).unref(),
  };
};

/** The site on 127.0.0.1 and sift listening beside it (fleet callers may reach loopback). */
export async function startFirecrawlSite(): Promise<{
  app: INestApplication;
  fixture: Fixture;
  base: string;
}> {
  const fixture = await new Fixture(firecrawlSite()).start();
  const { app } = await createTestApp({ SIFT_FLEET_ALLOW: '127.0.0.0/8' });
  await app.listen(0, '127.0.0.1');
  return { app, fixture, base: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}` };
}
