import { Logger } from '@nestjs/common';
import { abortable } from '../common/abortable';
import { FetchError, SiftError } from '../common/errors';
import type { Renderer } from '../render/renderer';
import type {
  ActionResults,
  BrowserCookie,
  BrowserState,
  PageAction,
  RenderResult,
  RenderScreenshot,
} from '../render/render-types';
import { wantsBrowser, type Verdict } from '../extract/verdict';
import { callerKeyOf } from '../dcache';
import { DOWNLOAD_CAP } from '../fetch/fetcher';
import type { Caller } from './caller-policy';
import type { EgressProxy } from '../config/parsers';

/** How often a render refused at the caller's cap is tried again (the runner's). */
const RETRY_MS = 100;

export type RenderMode = 'never' | 'auto' | 'always';

/** What a call asks of the browser (SPEC "Rendering"). */
export interface RenderAsk {
  mode: RenderMode;
  waitFor?: string;
  waitMs?: number;
  screenshot?: boolean;
  /** The screenshot is of the whole page. */
  fullPage?: boolean;
  /** Steps taken on the loaded page (actions ask a render). */
  actions?: PageAction[];
  /** A profile: the state the browser starts with, and where the state it ends with is kept. */
  profile?: { state?: BrowserState; save?: (state: BrowserState) => Promise<void> };
  /** When the call's time is up (ms since the epoch): the render gets what is left. */
  deadline: number;
}

/** What a rendered page keeps beside its source (and its envelope says). */
export interface BrowserMeta {
  browser?: { requests: number; blocked: number };
  screenshot?: RenderScreenshot;
  /** What the actions gave. */
  actions?: ActionResults;
}

/** The part of the cache key a render ask adds: none for the default (auto, no waits, no screenshot). */
export function renderKeyPart(p: {
  render?: RenderMode;
  wait_for?: string;
  wait_ms?: number;
  screenshot?: boolean;
  full_page?: boolean;
  actions?: PageAction[];
}): unknown[] {
  const mode = p.render ?? 'auto';
  const shot = p.screenshot === true && (p.full_page === true ? 'full_page' : true);
  const waits = [p.wait_for ?? null, p.wait_ms ?? null, shot];
  const actions = p.actions?.length ? [{ actions: p.actions }] : [];
  return mode === 'auto' && waits[0] === null && waits[1] === null && !waits[2] && !actions.length
    ? []
    : [['render', mode, ...waits, ...actions]];
}

/** A fetched html page and its verdict. */
export interface StaticPage {
  html: string;
  finalUrl: string;
  status: number;
  raw: { contentType: string };
  /** The static page's verdict (auto decides by it); none when it was not judged (always). */
  verdict?: Verdict;
}

/** A rendered page: its DOM, where it ended, and what the envelope says of the render. */
export interface Shown {
  html: string;
  finalUrl: string;
  status: number;
  shown: BrowserMeta;
}

/**
 * A fetched html page in Chromium, when the call asks for it: always, or (auto) when the static
 * page is a script shell or empty with scripts. Without Chromium, auto keeps the static page
 * (undefined; the log says why, once) and always fails 503 render_unavailable.
 */
export class BrowserStep {
  private readonly log = new Logger('render');
  private hinted = false;

  constructor(private readonly renderer: Renderer | undefined) {}

  async maybeRender(
    page: StaticPage,
    req: {
      render?: RenderAsk;
      caller: Caller;
      signal: AbortSignal;
      waitForExtraction?: boolean;
      cookies?: { browser: BrowserCookie[] };
      proxy?: EgressProxy;
    },
  ): Promise<Shown | undefined> {
    const ask = req.render;
    const mode = ask?.mode ?? 'never';
    if (!ask || mode === 'never' || !this.renderer) return undefined;
    const { html, finalUrl, status } = page;
    if (mode === 'auto' && (!page.verdict || !wantsBrowser(page.verdict, html))) return undefined;
    const renderer = this.renderer;
    let r: RenderResult;
    try {
      r = await this.untilRoom(req.waitForExtraction === true, ask.deadline, req.signal, () =>
        renderer.render({
          url: new URL(finalUrl),
          html,
          status,
          contentType: page.raw.contentType,
          callerClass: req.caller.callerClass,
          who: callerKeyOf(req.caller),
          timeoutMs: Math.max(1, ask.deadline - Date.now()),
          waitFor: ask.waitFor,
          waitMs: ask.waitMs,
          screenshot: ask.screenshot,
          fullPage: ask.fullPage,
          actions: ask.actions,
          storageState: ask.profile?.state,
          keepState: ask.profile?.save !== undefined,
          cookies: req.cookies?.browser,
          proxy: req.proxy,
          // The download cap: what the page's requests may bring in, and the most html given back.
          maxBytes: DOWNLOAD_CAP,
          signal: req.signal,
        }),
      );
    } catch (err) {
      if (mode === 'always' || !(err instanceof SiftError) || err.code !== 'render_unavailable') throw err;
      if (!this.hinted) {
        this.hinted = true;
        this.log.warn(
          `render "auto" answers pages that need a browser statically: ${err.message}; ${err.hint}`,
        );
      }
      return undefined;
    }
    if (r.storageState && ask.profile?.save) await ask.profile.save(r.storageState);
    const browser = { requests: r.requests, blocked: r.blocked };
    const shown = {
      browser,
      ...(r.screenshot ? { screenshot: r.screenshot } : {}),
      ...(r.actions ? { actions: r.actions } : {}),
    };
    return { html: r.html, finalUrl: r.finalUrl, status: r.status, shown };
  }

  /**
   * A render; for the runner (`wait`), one refused at the caller's render cap is tried again
   * until its deadline, as its extraction waits for room: a job's targets queue for the
   * browser instead of failing 429. A call of /v1/fetch is answered 429 at once.
   */
  private async untilRoom<T>(
    wait: boolean,
    deadline: number,
    signal: AbortSignal,
    render: () => Promise<T>,
  ): Promise<T> {
    for (;;) {
      try {
        return await render();
      } catch (err) {
        if (!wait || !(err instanceof SiftError) || err.code !== 'too_many_requests') throw err;
        if (Date.now() + RETRY_MS >= deadline)
          throw new FetchError(
            'timeout',
            "the page was not rendered in time: the caller's renders were all busy",
          );
        await abortable(new Promise((resolve) => setTimeout(resolve, RETRY_MS)), signal);
      }
    }
  }
}
