import type { Locator, Page } from 'playwright-core';
import { FetchError, invalidRequest, SiftError } from '../common/errors';
import type { ActionResults, PageAction, RenderScreenshot } from './render-types';

/** `click` with `all`: at most this many of the matches are clicked. */
export const MAX_CLICKS = 100;
/** A script's answer is cut to this many characters of JSON (the rest is not brought over). */
const MAX_RETURN_CHARS = 1024 * 1024;

/** What the actions need of the render around them; every wait is bounded by what is left of its deadline. */
export interface ActionPage {
  page: Page;
  /** Milliseconds left of the render's deadline. */
  left: () => number;
  signal: AbortSignal;
  /** Bytes the actions' results may take in all (the render's download cap). */
  maxBytes: number;
  /** Waits for the requests an action started to end (briefly; a busy page is not waited out). */
  settle: () => Promise<void>;
  screenshot: (fullPage: boolean) => Promise<RenderScreenshot>;
  /** The page's html now, or undefined when over the cap. */
  html: () => Promise<string | undefined>;
  sleep: (ms: number) => Promise<void>;
}

/**
 * The caller's actions, one after the other on the loaded page. Every request they cause goes
 * through the render's proxy like the page's own, so the caller's address policy holds for a
 * click as for the page. A step the deadline cuts ends the render with `timeout` naming it; a
 * selector the browser cannot read, or a key it does not know, is the caller's 400.
 */
export async function runActions(p: ActionPage, actions: PageAction[]): Promise<ActionResults> {
  const out: ActionResults = { screenshots: [], scrapes: [], javascriptReturns: [] };
  let bytes = 0;
  const count = (n: number) => {
    bytes += n;
    if (bytes > p.maxBytes)
      throw new FetchError(
        'too_large',
        `the actions' results are over the download cap of ${p.maxBytes} bytes`,
      );
  };
  for (const [i, a] of actions.entries()) {
    try {
      await step(p, a, out, count).catch(async (err: Error) => {
        // The step before navigated (a click on a link, a form sent): once the new page has
        // loaded, this one is taken on it.
        if (!NAVIGATED.test(err.message ?? '')) throw err;
        await p.page.waitForLoadState('load', { timeout: p.left() });
        await step(p, a, out, count);
      });
    } catch (err) {
      throw actionError(err as Error, i, a, p.left());
    }
  }
  return out;
}

async function step(
  p: ActionPage,
  a: PageAction,
  out: ActionResults,
  count: (bytes: number) => void,
): Promise<void> {
  const { page } = p;
  switch (a.type) {
    case 'wait':
      if (a.selector !== undefined)
        await css(page, a.selector).first().waitFor({ state: 'attached', timeout: p.left() });
      else await p.sleep(a.milliseconds ?? 0);
      return;
    case 'click': {
      const matches = css(page, a.selector);
      if (!a.all) await matches.first().click({ timeout: p.left() });
      else {
        await matches.first().waitFor({ state: 'attached', timeout: p.left() });
        const n = Math.min(await matches.count(), MAX_CLICKS);
        for (let k = 0; k < n; k++) await matches.nth(k).click({ timeout: p.left() });
      }
      return p.settle();
    }
    case 'write':
      await page.keyboard.type(a.text);
      return p.settle();
    case 'press':
      await page.keyboard.press(a.key);
      return p.settle();
    case 'scroll': {
      const by = a.direction === 'up' ? -1 : 1;
      if (a.selector === undefined)
        await page.evaluate((sign) => window.scrollBy(0, sign * window.innerHeight), by);
      else
        await css(page, a.selector)
          .first()
          .evaluate((el, sign) => el.scrollBy(0, sign * (el.clientHeight || window.innerHeight)), by, {
            timeout: p.left(),
          });
      return p.settle();
    }
    case 'screenshot': {
      const shot = await p.screenshot(a.fullPage === true);
      count(shot.data.length);
      out.screenshots.push(shot);
      return;
    }
    case 'scrape': {
      const html = await p.html();
      if (html === undefined) return count(Infinity);
      count(Buffer.byteLength(html));
      out.scrapes.push({ url: page.url(), html });
      return;
    }
    case 'executeJavascript': {
      const ret = await scriptReturn(page, a.script);
      count(JSON.stringify(ret.value ?? null).length);
      out.javascriptReturns.push(ret);
      return p.settle();
    }
  }
}

/** A step that met a page being replaced. */
const NAVIGATED = /context was destroyed|navigat|frame was detached/i;

/** Selectors are CSS, always: the driver's own selector engines (text=, xpath=…) are not offered. */
const css = (page: Page, selector: string): Locator => page.locator(`css=${selector}`);

/**
 * The script run as the body of an async function in the page; what it returns, as JSON carries
 * it, or the error it threw (a script's failure is its answer, not the page's).
 */
async function scriptReturn(page: Page, script: string): Promise<{ type: string; value: unknown }> {
  // Built as one expression: the driver evaluates it past the page's Content-Security-Policy,
  // which a Function made in the page would not be.
  const expr =
    `(async () => { const value = await (async () => {\n${script}\n})();` +
    // What JSON cannot carry (undefined, a function, a symbol) is null; a BigInt makes it throw.
    ` const kept = value === undefined || typeof value === 'function' || typeof value === 'symbol' ? null : value;` +
    ` const text = JSON.stringify({ type: typeof value, value: kept });` +
    ` return text.length > ${MAX_RETURN_CHARS} ? null : text; })()`;
  try {
    const json: unknown = await page.evaluate(expr);
    if (typeof json !== 'string')
      return { type: 'error', value: `the return is over ${MAX_RETURN_CHARS} characters of JSON` };
    return JSON.parse(json) as { type: string; value: unknown };
  } catch (err) {
    const msg = (err as Error).message ?? String(err);
    if (/Target (page|closed)|context was destroyed|browser has been closed/i.test(msg)) throw err;
    return {
      type: 'error',
      value: msg
        .replace(/^page\.evaluate: /, '')
        .split('\n')[0]
        .slice(0, 1000),
    };
  }
}

/** An action's failure in the caller's words, naming the action. */
function actionError(err: Error, i: number, a: PageAction, left: number): Error {
  const msg = err.message ?? '';
  const what = `actions.${i} (${a.type})`;
  if (/is not a valid selector|SyntaxError|Unexpected token|Unknown engine/i.test(msg) && 'selector' in a)
    return invalidRequest(
      `${what}: ${JSON.stringify(String(a.selector).slice(0, 200))} is not a valid CSS selector`,
    );
  if (a.type === 'press' && /Unknown key/i.test(msg))
    return invalidRequest(
      `${what}: ${JSON.stringify(a.key.slice(0, 64))} is not a key the browser knows`,
      'name a key as the browser does: "Enter", "Tab", "ArrowDown", "a", "Control+A"…',
    );
  if (err.name === 'TimeoutError' || left <= 1)
    return new FetchError('timeout', `${what} did not complete before the render's deadline`);
  if (err instanceof SiftError) return err;
  // The page closed itself, crashed, or went away under the step: the caller is told which step.
  return new SiftError(
    502,
    'action_failed',
    `${what} could not be taken: ${(msg.split('\n')[0] || 'the page failed').slice(0, 200)}`,
    'check the step against the page (a selector that matches, a page that stays open), or leave it out',
  );
}
