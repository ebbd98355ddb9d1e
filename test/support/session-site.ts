import { randomBytes } from 'node:crypto';
import { Fixture, html, send, type Handler } from './fixture';

/** The actions that log in on the site's form as ada. */
export const LOGIN_ACTIONS = [
  { type: 'click', selector: '#user' },
  { type: 'write', text: 'ada' },
  { type: 'click', selector: '#pass' },
  { type: 'write', text: 'lovelace' },
  { type: 'press', key: 'Enter' },
  { type: 'wait', selector: '#account' },
];

const words = (what: string) => `${what} has enough words in it to be read as the page's content. `.repeat(6);

/**
 * A site that needs a session, a click or a scroll: a login form that sets a session cookie and a
 * page behind it; a feed behind a cookie banner whose "load more" button brings two items a click
 * (three clicks, then it is gone); a tall page that loads its tail once scrolled; a page whose
 * button and link reach `secret` (an address the caller may not reach).
 */
export class SessionSite {
  readonly fixture: Fixture;
  /** Session ids the login gave out. */
  readonly sessions = new Set<string>();
  /** Requests that reached the account page with a session. */
  accountHits = 0;

  constructor(secret: () => string) {
    const page = (title: string, body: string, head = '') => send(200, 'text/html', html(body, title, head));
    const routes: Record<string, Handler> = {
      '/login': (req, res) => {
        if (req.method !== 'POST')
          return page(
            'Log in',
            `<main><h1>Log in</h1><form method="post" action="/login">` +
              `<input id="user" name="user"><input id="pass" name="pass" type="password">` +
              `<button id="go" type="submit">Log in</button></form><p>${words('The login page')}</p></main>`,
          )(req, res);
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          const f = new URLSearchParams(body);
          if (f.get('user') !== 'ada' || f.get('pass') !== 'lovelace')
            return send(401, 'text/html', html('<p>Wrong name or password.</p>', 'Refused'))(req, res);
          const sid = randomBytes(12).toString('hex');
          this.sessions.add(sid);
          res.writeHead(302, { location: '/account', 'set-cookie': `sid=${sid}; Path=/; HttpOnly` });
          res.end();
        });
      },
      '/account': (req, res) => {
        const sid = /(?:^|;\s*)sid=([0-9a-f]+)/.exec(req.headers.cookie ?? '')?.[1];
        if (!sid || !this.sessions.has(sid))
          return send(302, 'text/html', '', { location: '/login' })(req, res);
        this.accountHits++;
        page(
          'Account',
          `<article id="account"><h1>Account of ada</h1><p>${words('The private account page')}</p></article>`,
        )(req, res);
      },
      '/feed': page(
        'Feed',
        `<div id="banner" style="position:fixed;inset:0;background:#fff;z-index:9">We use cookies. <button id="accept">Accept</button></div>` +
          `<article><h1>Feed</h1><ul id="items"><li>Item 1 ${words('An item')}</li><li>Item 2 ${words('An item')}</li></ul>` +
          `<button id="more">Load more</button> <a id="next" href="/tall">Next</a></article>` +
          `<script>
            let pageNo = 1;
            document.getElementById('accept').onclick = () => document.getElementById('banner').remove();
            document.getElementById('more').onclick = async () => {
              pageNo++;
              const r = await fetch('/feed/more?page=' + pageNo);
              document.getElementById('items').insertAdjacentHTML('beforeend', await r.text());
              if (pageNo >= 4) document.getElementById('more').remove();
            };
          </script>`,
      ),
      '/feed/more': (req, res) => {
        const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page'));
        const items = [2 * n - 1, 2 * n].map((k) => `<li>Item ${k} ${words('An item')}</li>`).join('');
        send(200, 'text/html', items)(req, res);
      },
      '/tall': page(
        'Tall',
        `<article><h1>Tall</h1>${Array.from({ length: 30 }, (_, i) => `<p style="height:200px;background:hsl(${i * 12},60%,70%)">Part ${i} ${words('A part')}</p>`).join('')}<div id="tail"></div></article>` +
          `<script>
            addEventListener('scroll', () => {
              if (!document.getElementById('tail').textContent) document.getElementById('tail').textContent = 'The tail that scrolling loads.';
            });
          </script>`,
      ),
      '/leak': (req, res) =>
        page(
          'Leak',
          `<article><h1>Leak</h1><p>${words('A page that reaches elsewhere')}</p>` +
            // What the fetch came to is written on the page (a step can wait for it).
            `<button id="leak" onclick="fetch('${secret()}').then((r) => 'answered ' + r.status, () => 'refused')` +
            `.then((t) => document.querySelector('article').insertAdjacentHTML('beforeend', '<p id=outcome>Outcome: ' + t + '</p>'))">Send</button>` +
            `<a id="away" href="${secret()}">Away</a>` +
            // A handler busy for a while that then asks for more: the click returns only after it.
            `<button id="slow" onclick="const t = Date.now(); while (Date.now() - t < 400); setTimeout(() => ` +
            `fetch('/feed/more?page=9').then((r) => r.text()).then((t) => document.querySelector('article').insertAdjacentHTML('beforeend', t)), 30)">Slow</button></article>`,
        )(req, res),
    };
    this.fixture = new Fixture(routes);
  }

  async start(host: string): Promise<this> {
    await this.fixture.start(host);
    return this;
  }

  url(path: string): string {
    return this.fixture.url(path);
  }

  stop(): Promise<void> {
    return this.fixture.stop();
  }
}
