import type { CallerClass } from '../config/app-config';
import type { EgressProxy } from '../config/parsers';
import { FetchError, SiftError } from '../common/errors';

export interface RenderRequest {
  url: URL;
  /** The document already fetched: the browser's first navigation is answered with it, not fetched again. */
  html?: string;
  status?: number;
  contentType?: string;
  callerClass: CallerClass;
  /** The caller's key: its DNS slots and its render cap. */
  who: string;
  /** One deadline over the whole render (navigation, waits, content, screenshot). */
  timeoutMs: number;
  /** A CSS selector to wait for. */
  waitFor?: string;
  /** A further wait, 0–10,000 ms, once loaded (and once `waitFor` matched). */
  waitMs?: number;
  /** The operator's egress proxy every request of the page goes through, after sift's own. */
  proxy?: EgressProxy;
  /** A profile's storage state the browser starts with (cookies, localStorage). */
  storageState?: BrowserState;
  /** The browser's storage state is given back once the page is read (a profile saves it). */
  keepState?: boolean;
  /** The caller's cookies, each scoped to its site (pages/cookies.ts). */
  cookies?: BrowserCookie[];
  /** Steps taken on the page once loaded and waited for, in order (see page-actions.ts). */
  actions?: PageAction[];
  screenshot?: boolean;
  /** The screenshot is of the whole page (at most MAX_SHOT_HEIGHT pixels high), not the viewport. */
  fullPage?: boolean;
  /** The download cap: bytes the page's requests may bring in, and the most HTML given back. */
  maxBytes: number;
  signal: AbortSignal;
}

/** A cookie as Chromium takes it: host-only by URL, else by domain and path. */
export type BrowserCookie = { name: string; value: string } & (
  { url: string } | { domain: string; path: string }
);

export interface RenderScreenshot {
  type: 'image/png';
  width: number;
  height: number;
  /** base64 */
  data: string;
}

export interface RenderResult {
  /** The DOM once rendered. */
  html: string;
  finalUrl: string;
  status: number;
  /** Requests the page made through the proxy (allowed and blocked), and of them those refused. */
  requests: number;
  blocked: number;
  screenshot?: RenderScreenshot;
  /** What the actions gave, when there were any. */
  actions?: ActionResults;
  /** With keepState: the browser's storage state once the page was read. */
  storageState?: BrowserState;
}

/** A browser's storage state, as Chromium's driver gives and takes it. */
export interface BrowserState {
  cookies: {
    name: string;
    value: string;
    domain: string;
    path: string;
    expires: number;
    httpOnly: boolean;
    secure: boolean;
    sameSite: 'Strict' | 'Lax' | 'None';
  }[];
  origins: { origin: string; localStorage: { name: string; value: string }[] }[];
}

/**
 * One step a caller asks of a rendered page, Firecrawl's names and shapes: wait (a time, or a CSS
 * selector to appear), click (the first match, or `all`), write (typed into the focused element),
 * press (a key), scroll (the page or an element, a screen's height), screenshot, scrape (the html
 * at that point), executeJavascript (a function body; fleet only, where the operator allows it).
 */
export type PageAction =
  | { type: 'wait'; milliseconds?: number; selector?: string }
  | { type: 'click'; selector: string; all?: boolean }
  | { type: 'write'; text: string }
  | { type: 'press'; key: string }
  | { type: 'scroll'; direction?: 'up' | 'down'; selector?: string }
  | { type: 'screenshot'; fullPage?: boolean }
  | { type: 'scrape' }
  | { type: 'executeJavascript'; script: string };

/** What a page's actions gave, each list in the order of the actions that made it. */
export interface ActionResults {
  screenshots: RenderScreenshot[];
  scrapes: { url: string; html: string }[];
  /** What each script returned (its JavaScript type, and the value as JSON carries it), or `error` and why. */
  javascriptReturns: { type: string; value: unknown }[];
}

/** Per render: requests, distinct hosts (SPEC "Rendering"). */
export const RENDER_MAX_REQUESTS = 500;
export const RENDER_MAX_HOSTS = 50;

export const renderUnavailable = (why: string, chromiumPath: string) =>
  new SiftError(
    503,
    'render_unavailable',
    `pages cannot be rendered here: ${why}`,
    `install Debian's \`chromium-headless-shell\` package (apt-get install chromium-headless-shell), or set SIFT_CHROMIUM_PATH to a Chromium binary (now ${chromiumPath}); where Chromium's sandbox cannot start (no unprivileged user namespaces), SIFT_CHROMIUM_NO_SANDBOX=1 runs it without one; render: "never" or "auto" still fetch statically`,
  ).retryAfter(60);

/** A page took its browser's processes over SIFT_RENDER_MAX_MEMORY: the browser is replaced. */
export const renderTooCostly = (maxMemory: number) =>
  new SiftError(
    502,
    'render_too_costly',
    `the page took the browser over SIFT_RENDER_MAX_MEMORY (${Math.round(maxMemory / 2 ** 20)} MiB) while it rendered`,
    'fetch it with render "never" (its scripts are not run), or ask the operator to raise SIFT_RENDER_MAX_MEMORY',
  );

export const renderTimeout = (ms: number) =>
  new FetchError('timeout', `the page was not rendered within ${ms} ms`);
