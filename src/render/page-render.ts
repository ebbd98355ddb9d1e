import type { BrowserContext, Page, Request, Route } from 'playwright-core';
import { FetchError, invalidRequest } from '../common/errors';
import { proxyError } from '../fetch/egress';
import { runActions } from './page-actions';
import type { RenderRequest, RenderResult } from './render-types';

/** The viewport a page is laid out (and photographed) in. */
export const VIEWPORT = { width: 1280, height: 800 };
/** A whole page's screenshot is cut at this height (a page can be endless; Chromium's limit is near). */
export const MAX_SHOT_HEIGHT = 16_384;
/** After `load`, how long a page may take to go quiet before it is read anyway. */
const SETTLE_MS = 3000;
/**
 * Quiet: no request of the page (any frame) in flight for this long. The driver's `networkidle`
 * waits 500 ms; a page's next request follows the last answer within a few milliseconds (a
 * script run on it, a chunk it imports), so 500 ms is mostly spent waiting on nothing.
 */
const QUIET_MS = 300;
/** After an action: how long without a request in flight before the next step (an answer's script runs within it). */
const ACTION_QUIET_MS = 100;
/** After an action, its requests are waited for at most this long (a page that polls is not waited out). */
const ACTION_SETTLE_MS = 2000;
/** Loaded resources not needed to read a page: not fetched unless a screenshot is asked for. */
const UNSEEN = new Set(['image', 'font', 'media']);

type Rendered = Omit<RenderResult, 'requests' | 'blocked'>;

/**
 * One render in a fresh context: navigate (the first document answered with the one already
 * fetched, when given), let it load and go quiet, wait for the caller's selector and time, then
 * read the DOM and take the screenshot. The caller holds the deadline; here every step is given
 * what is left of it, and `signal` ends the work when the deadline passes.
 */
export async function renderPage(
  ctx: BrowserContext,
  req: RenderRequest,
  deadline: number,
  signal: AbortSignal,
  /** The proxy's counts so far: requests refused, connections the egress proxy failed. */
  counts: { readonly blocked: number; readonly proxyFailed: number },
): Promise<Rendered> {
  const blocked = () => counts.blocked;
  // The page itself could not be had through the operator's proxy: its failure, named.
  const proxyFailure = () =>
    req.proxy && counts.proxyFailed > 0
      ? proxyError(req.proxy.name, 'it did not open a connection to the page')
      : undefined;
  const left = () => Math.max(1, deadline - Date.now());
  await ctx.route('**/*', handOver(req));
  if (req.cookies?.length) await ctx.addCookies(req.cookies);
  const page = await ctx.newPage();
  const traffic = new Traffic(page);
  let status = req.html !== undefined ? (req.status ?? 200) : 0;
  // A navigation of the page's own frame that the proxy refused (the page, or a redirect in script).
  let refusedUrl: string | undefined;
  page.on('response', (r) => {
    if (!r.request().isNavigationRequest() || r.frame() !== page.mainFrame()) return;
    status = r.status();
    const why = r.headers()['x-sift-refused'];
    if (why !== undefined && why !== 'proxy_error') refusedUrl ??= r.url();
  });
  page.on('requestfailed', (r) => {
    if (!r.isNavigationRequest() || r.frame() !== page.mainFrame()) return;
    if (/TUNNEL/.test(r.failure()?.errorText ?? '') && blocked() > 0) refusedUrl ??= r.url();
  });
  const first = await page.goto(req.url.href, { waitUntil: 'load', timeout: left() }).catch((err: Error) => {
    throw (
      proxyFailure() ??
      navigationError(
        err,
        refusedUrl ? new URL(refusedUrl) : req.url,
        refusedUrl !== undefined || blocked() > 0,
      )
    );
  });
  if (refusedUrl) throw refused(new URL(refusedUrl));
  if (first?.headers()['x-sift-refused'] === 'proxy_error') throw proxyFailure() ?? refused(req.url);
  if (first) status = first.status();
  await traffic.quiet(Math.min(SETTLE_MS, left() / 2), signal);
  if (req.waitFor) await waitForSelector(page, req.waitFor, left());
  if (req.waitMs) await sleep(req.waitMs, signal);
  const actions = req.actions?.length
    ? await runActions(
        {
          page,
          left,
          signal,
          maxBytes: req.maxBytes,
          // Quiet is counted from the step's end: a click can take longer than the quiet itself,
          // and what its handler asked for is reported to us only after it returns.
          settle: () =>
            traffic.quiet(Math.min(ACTION_SETTLE_MS, left() / 2), signal, Date.now(), ACTION_QUIET_MS),
          screenshot: (full) => screenshotOf(page, full, left),
          html: () => readDom(page, req.maxBytes, left),
          sleep: (ms) => sleep(ms, signal),
        },
        req.actions,
      )
    : undefined;
  if (refusedUrl) throw refused(new URL(refusedUrl));
  const html = await readDom(page, req.maxBytes, left);
  if (refusedUrl) throw refused(new URL(refusedUrl));
  if (html === undefined || Buffer.byteLength(html) > req.maxBytes) {
    throw new FetchError('too_large', `the rendered page is over the download cap of ${req.maxBytes} bytes`);
  }
  const out: Rendered = { html, finalUrl: page.url(), status, ...(actions ? { actions } : {}) };
  if (req.screenshot) out.screenshot = await screenshotOf(page, req.fullPage === true, left);
  return out;
}

/** A PNG of the viewport, or of the whole page from its top down to MAX_SHOT_HEIGHT. */
async function screenshotOf(page: Page, fullPage: boolean, left: () => number) {
  let height = VIEWPORT.height;
  if (fullPage) {
    // The page's own script may change what it reports: only a number within bounds is taken.
    const h: unknown = await page.evaluate(() => document.documentElement.scrollHeight).catch(() => 0);
    height = Math.min(
      MAX_SHOT_HEIGHT,
      Math.max(VIEWPORT.height, Number.isFinite(h) ? Math.ceil(Number(h)) : 0),
    );
  }
  const png = await page.screenshot({
    type: 'png',
    timeout: left(),
    ...(fullPage ? { fullPage: true, clip: { x: 0, y: 0, width: VIEWPORT.width, height } } : {}),
  });
  return { type: 'image/png' as const, width: VIEWPORT.width, height, data: png.toString('base64') };
}

/**
 * The route every request passes: the first navigation of the page's own frame to the URL is
 * answered with the document already fetched (once); images, fonts and media are refused unless
 * the page is to be photographed; everything else goes on, through the proxy.
 */
function handOver(req: RenderRequest): (route: Route) => Promise<void> {
  let given = req.html === undefined;
  return async (route) => {
    const r = route.request();
    if (!given && r.isNavigationRequest() && r.frame().parentFrame() === null && r.url() === req.url.href) {
      given = true;
      const type = (req.contentType ?? 'text/html').split(';')[0].trim() || 'text/html';
      return route.fulfill({
        status: req.status ?? 200,
        contentType: `${type}; charset=utf-8`,
        body: req.html,
      });
    }
    if (!req.screenshot && UNSEEN.has(r.resourceType())) return route.abort('blockedbyclient');
    return route.fallback();
  };
}

/** The page's requests in flight, and when one last started or ended. */
class Traffic {
  private readonly open = new Set<Request>();
  private last = Date.now();

  constructor(page: Page) {
    page.on('request', (r) => {
      this.open.add(r);
      this.last = Date.now();
    });
    const ended = (r: Request) => {
      if (this.open.delete(r)) this.last = Date.now();
    };
    page.on('requestfinished', ended);
    page.on('requestfailed', ended);
  }

  /**
   * Waits up to `ms` for `quietMs` without a request in flight (counted from `since` at the
   * earliest); a page that never goes quiet is read as it stands.
   */
  async quiet(ms: number, signal: AbortSignal, since = 0, quietMs = QUIET_MS): Promise<void> {
    const end = Date.now() + ms;
    for (let now = Date.now(); now < end; now = Date.now()) {
      // While a request is open, looked at again every 25 ms; else when the quiet would be complete.
      const wait = this.open.size > 0 ? 25 : Math.max(this.last, since) + quietMs - now;
      if (wait <= 0) return;
      await sleep(Math.min(wait, end - now), signal);
    }
  }
}

async function waitForSelector(page: Page, selector: string, ms: number): Promise<void> {
  try {
    await page.waitForSelector(selector, { state: 'attached', timeout: ms });
  } catch (err) {
    const msg = (err as Error).message ?? '';
    if (/is not a valid selector|SyntaxError|Unexpected token|Unknown engine/i.test(msg)) {
      throw invalidRequest(`wait_for is not a valid CSS selector: ${selector.slice(0, 200)}`);
    }
    throw err;
  }
}

/**
 * The DOM as html, read in the page's own world: page.content() reads it in an isolated world the
 * driver builds on first use, about 25 ms of a render. A page can only misreport its own markup
 * there, which it could as well by writing it; what is not a string (a page that replaced the
 * getters) is read again the driver's way. Over `maxBytes` characters it is not brought over at
 * all (undefined). Read again once a navigation the page started in script has loaded (reading a
 * document that is being replaced fails).
 */
async function readDom(page: Page, maxBytes: number, left: () => number): Promise<string | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      const own = await page.evaluate(ownMarkup, maxBytes);
      if (typeof own === 'string') return own;
      if (own === false) return undefined;
      return await page.content();
    } catch (err) {
      if (attempt >= 4 || !/navigat|context was destroyed/i.test((err as Error).message ?? '')) throw err;
      await page.waitForLoadState('load', { timeout: left() });
    }
  }
}

/** Runs in the page: its markup as page.content() gives it, false when over `max`, null when unreadable. */
function ownMarkup(max: number): string | false | null {
  try {
    const doc = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
    const html = doc + (document.documentElement ? document.documentElement.outerHTML : '');
    if (typeof html !== 'string') return null;
    return html.length > max ? false : html;
  } catch {
    return null;
  }
}

const refused = (url: URL) =>
  new FetchError('blocked_address', `${url.hostname} is not reachable for this caller`);

/** What a failed navigation of the page itself means, in the words of a static fetch. */
function navigationError(err: Error, url: URL, refusedByProxy: boolean): Error {
  const net = /net::(ERR_[A-Z_]+)/.exec(err.message ?? '')?.[1];
  if (!net) return err;
  // The proxy refused the page itself: a 403 for plain HTTP, a failed CONNECT for HTTPS.
  if (refusedByProxy && /TUNNEL|RESPONSE_CODE_FAILURE|EMPTY_RESPONSE/.test(net)) return refused(url);
  if (net === 'ERR_NAME_NOT_RESOLVED') return new FetchError('dns_error', `${url.hostname} did not resolve`);
  if (net === 'ERR_TIMED_OUT') return new FetchError('timeout', `${url.host} did not answer in time`);
  if (/CERT|SSL/.test(net)) return new FetchError('tls_error', `TLS with ${url.host} failed (${net})`);
  if (net === 'ERR_TOO_MANY_REDIRECTS')
    return new FetchError('too_many_redirects', `${url.href} redirects in a loop`);
  return new FetchError('connect_error', `${url.host} could not be loaded (${net})`);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    };
    const stop = () => {
      done();
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal.addEventListener('abort', stop, { once: true });
  });
}
