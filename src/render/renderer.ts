import type { CallerClass } from '../config/app-config';
import { RenderProxy, type ProxyGate, type ProxySession } from './render-proxy';
import { BrowserHost, LaunchError, type Lease } from './browser-host';
import { renderPage, VIEWPORT } from './page-render';
import { FairSlots } from '../common/fair-slots';
import { CallerRenders } from './caller-renders';
import {
  RENDER_MAX_HOSTS,
  RENDER_MAX_REQUESTS,
  renderTimeout,
  renderUnavailable,
  type BrowserState,
  type RenderRequest,
  type RenderResult,
} from './render-types';

export interface RendererOptions {
  chromiumPath: string;
  /** Renders at once over all callers. */
  pages: number;
  /** Renders at once per caller, by class. */
  perCaller: Record<CallerClass, number>;
  /** The browser is replaced after this many renders… */
  recycleAfter: number;
  /** …or once its processes use more than this many bytes (a render that takes it over fails). */
  maxMemory: number;
  /** Chromium without its sandbox (SIFT_CHROMIUM_NO_SANDBOX). */
  noSandbox?: boolean;
  /** Where a render of this caller may connect (the caller's DNS account and address policy). */
  gate: (callerClass: CallerClass, who: string) => ProxyGate;
  log?: (message: string) => void;
}

/** After a launch failed, renders fail at once for this long before a launch is tried again. */
const RETRY_LAUNCH_MS = 60_000;

/**
 * Renders pages in Chromium (SPEC "Rendering"): a context per render on one shared browser, every
 * request of the page through sift's proxy with per-render credentials and the caller's address
 * policy, one deadline over all of it, and a pool that bounds how many run and cannot leak.
 */
export class Renderer {
  private readonly host: BrowserHost;
  /** The pages, handed out by the one fair scheduler. */
  private readonly pages: FairSlots;
  private readonly callers: CallerRenders;
  private proxy?: Promise<RenderProxy>;
  private proxyPort = 0;
  private failedAt = 0;
  private failure = '';

  constructor(private readonly opts: RendererOptions) {
    this.pages = new FairSlots(opts.pages);
    this.callers = new CallerRenders(opts.perCaller);
    this.host = new BrowserHost({
      chromiumPath: opts.chromiumPath,
      recycleAfter: opts.recycleAfter,
      maxMemory: opts.maxMemory,
      noSandbox: opts.noSandbox,
      proxyPort: () => this.proxyPort,
      log: opts.log,
    });
  }

  /** Whether pages can be rendered: Chromium is there, and its last launch did not fail lately. */
  get available(): boolean {
    return this.host.installed() && Date.now() - this.failedAt >= RETRY_LAUNCH_MS;
  }

  async render(req: RenderRequest): Promise<RenderResult> {
    if (!this.host.installed())
      throw renderUnavailable(`no Chromium at ${this.opts.chromiumPath}`, this.opts.chromiumPath);
    if (Date.now() - this.failedAt < RETRY_LAUNCH_MS)
      throw renderUnavailable(this.failure, this.opts.chromiumPath);
    this.callers.enter(req.who, req.callerClass);
    const deadline = Date.now() + req.timeoutMs;
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(renderTimeout(req.timeoutMs)), req.timeoutMs);
    const onCancel = () => ac.abort(req.signal.reason);
    if (req.signal.aborted) onCancel();
    else req.signal.addEventListener('abort', onCancel, { once: true });
    let cleanup: Promise<void> = Promise.resolve();
    try {
      // A render given up for another caller's share (see FairSlots) starts again, first of its
      // caller's, within the same deadline.
      for (let again = false; ; again = true) {
        const page = await this.pages.acquire(req.who, {
          signal: ac.signal,
          preemptible: true,
          front: again,
        });
        const signal = AbortSignal.any([ac.signal, page.preempted]);
        const work = this.inContext(req, deadline, signal);
        cleanup = work.cleanup.finally(() => page.release());
        try {
          return await untilAborted(work.result, signal);
        } catch (err) {
          if (!page.preempted.aborted || ac.signal.aborted) throw err;
        }
      }
    } catch (err) {
      // A step the driver timed out at what was left of the deadline, a moment before the
      // deadline's own timer: the same timeout.
      throw (err as Error)?.name === 'TimeoutError' ? renderTimeout(req.timeoutMs) : err;
    } finally {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onCancel);
      // The answer does not wait for the context to close: it closes behind it, its page held
      // until it has. A render that ended counts no more against its caller; one cut off by its
      // deadline (a page stuck in script, say) counts until its context has closed.
      if (ac.signal.aborted) void cleanup.finally(() => this.callers.leave(req.who));
      else this.callers.leave(req.who);
    }
  }

  /** The render's work and, apart, the closing of everything it opened. */
  private inContext(
    req: RenderRequest,
    deadline: number,
    signal: AbortSignal,
  ): { result: Promise<RenderResult>; cleanup: Promise<void> } {
    let leased: Promise<Lease> | undefined;
    let session: ProxySession | undefined;
    const result = (async () => {
      const proxy = await this.startProxy();
      session = proxy.session(
        this.opts.gate(req.callerClass, req.who),
        { maxRequests: RENDER_MAX_REQUESTS, maxBytes: req.maxBytes, maxHosts: RENDER_MAX_HOSTS },
        signal,
        req.proxy,
      );
      leased = this.lease(session.username, session.password, req.storageState);
      const lease = await leased;
      // A browser killed under the render (taken over its memory limit) ends it with that reason.
      const live = AbortSignal.any([signal, lease.lost]);
      if (live.aborted) throw live.reason;
      const out = await untilAborted(renderPage(lease.context, req, deadline, live, session.counts), live);
      // The state the page left (a login's cookies), read before the context closes.
      const state = req.keepState ? ((await lease.context.storageState()) as BrowserState) : undefined;
      return {
        ...out,
        requests: session.counts.requests,
        blocked: session.counts.blocked,
        ...(state ? { storageState: state } : {}),
      };
    })();
    // Closed once the work has ended or been cut off: a page stuck in script never ends by itself.
    const ended = new Promise<void>((resolve) => {
      void result.then(
        () => resolve(),
        () => resolve(),
      );
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const cleanup = ended.then(async () => {
      const lease = await leased?.catch(() => undefined);
      await lease?.release();
      session?.close();
    });
    return { result, cleanup };
  }

  private async lease(username: string, password: string, storageState?: BrowserState): Promise<Lease> {
    try {
      return await this.host.context({
        proxy: { server: `http://127.0.0.1:${this.proxyPort}`, username, password, bypass: '<-loopback>' },
        serviceWorkers: 'block',
        acceptDownloads: false,
        javaScriptEnabled: true,
        viewport: VIEWPORT,
        ...(storageState ? { storageState } : {}),
      });
    } catch (err) {
      if (!(err instanceof LaunchError)) throw err;
      // Chromium did not start: say so, and do not try again at every render.
      this.failedAt = Date.now();
      this.failure = `Chromium at ${this.opts.chromiumPath} did not start (${err.message})`;
      this.opts.log?.(this.failure);
      throw renderUnavailable(this.failure, this.opts.chromiumPath);
    }
  }

  private startProxy(): Promise<RenderProxy> {
    this.proxy ??= RenderProxy.start().then((p) => {
      this.proxyPort = p.port;
      return p;
    });
    return this.proxy;
  }

  /** The current browser's processes (its launcher first); none before the first render. */
  processes(): number[] {
    return this.host.processes();
  }

  /** Browser contexts open now. */
  openContexts(): number {
    return this.host.openContexts();
  }

  /** Pages held by renders now. */
  get busy(): number {
    return this.pages.inUse;
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    await this.host.close();
    await (await this.proxy?.catch(() => undefined))?.close();
  }
}

/** `p`, or the signal's reason as soon as it aborts (p's own rejection is then ignored). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => undefined);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
