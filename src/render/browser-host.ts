import * as fs from 'node:fs';
import * as os from 'node:os';
import type { Browser, BrowserContext } from 'playwright-core';
import { isExecutable } from '../config/parsers';
import { BrowserInstance, CONTEXT_CLOSE_MS, within } from './browser-instance';
import { chromiumLauncher, removeLaunchFolder, sweepLeftovers, type Launcher } from './chromium-launcher';
import { CHROMIUM_ARGS, killTree, launcherPid, processTree } from './chromium-process';
import { renderTooCostly } from './render-types';

export interface BrowserHostOptions {
  chromiumPath: string;
  /** The browser is replaced after this many renders. */
  recycleAfter: number;
  /**
   * … or once its processes together use more memory than this (bytes); a render that takes it
   * over while in flight ends render_too_costly, with every other render on that browser.
   */
  maxMemory: number;
  /** Chromium without its sandbox (SIFT_CHROMIUM_NO_SANDBOX). */
  noSandbox?: boolean;
  /** The proxy every request of the browser's own goes to (and is refused there: no credentials). */
  proxyPort: () => number;
  log?: (message: string) => void;
}

/** Chromium would not start. */
export class LaunchError extends Error {}

export { CONTEXT_CLOSE_MS };
const LAUNCH_TIMEOUT_MS = 30_000;

/** A browser's memory is read after a render at most this often. */
const MEMORY_READ_EVERY_MS = 1000;

/**
 * One browser per instance, launched on first use; a context per render. The browser is replaced
 * after `recycleAfter` renders or above `maxMemory` (the one retired closes once its last context
 * has), relaunched after a crash, and killed with all its processes when a context will not close
 * or a render takes it over `maxMemory` (its memory is read while it renders).
 */
export class BrowserHost {
  private current?: BrowserInstance;
  private launching?: Promise<BrowserInstance>;
  private readonly all = new Set<BrowserInstance>();
  private closed = false;

  constructor(private readonly opts: BrowserHostOptions) {}

  /** Whether a Chromium is at the configured path. */
  installed(): boolean {
    return isExecutable(this.opts.chromiumPath);
  }

  /** A fresh context on the current browser (launched first if there is none). */
  async context(options: Parameters<Browser['newContext']>[0]): Promise<Lease> {
    for (let again = false; ; again = true) {
      const inst = await this.instance();
      inst.opened();
      inst.renders++;
      try {
        const ctx = await inst.browser.newContext(options);
        return new Lease(this, inst, ctx);
      } catch (err) {
        inst.closed();
        if (inst.lost.aborted) throw inst.lost.reason;
        // A browser that died a moment before, the driver not yet told: once more, on a new one.
        const pid = inst.pid;
        if (again || (inst.browser.isConnected() && pid !== undefined && alive(pid))) throw err;
        if (this.current === inst) this.current = undefined;
        if (!inst.dead) inst.kill();
      }
    }
  }

  private async instance(): Promise<BrowserInstance> {
    if (this.closed) throw new Error('the renderer has shut down');
    const cur = this.current;
    if (cur && !cur.dead && cur.browser.isConnected()) return cur;
    this.current = undefined;
    this.launching ??= this.launch().finally(() => (this.launching = undefined));
    return this.launching;
  }

  private async launch(): Promise<BrowserInstance> {
    const swept = await sweepLeftovers();
    if (swept > 0)
      this.opts.log?.(`removed what ${swept} browser(s) of ended processes left in ${os.tmpdir()}`);
    let launcher: Launcher;
    try {
      launcher = chromiumLauncher(this.opts.chromiumPath);
    } catch (err) {
      throw new LaunchError(`its launch folder could not be made (${(err as Error).message})`);
    }
    let browser: Browser;
    try {
      // Loaded on the first launch: the driver is about 75 MB of memory an instance that never
      // renders does not need.
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({
        executablePath: launcher.executable,
        headless: true,
        // As root the launcher runs it as an unprivileged user, where its sandbox starts.
        chromiumSandbox: !this.opts.noSandbox,
        args: CHROMIUM_ARGS,
        proxy: { server: `http://127.0.0.1:${this.opts.proxyPort()}`, bypass: '<-loopback>' },
        timeout: LAUNCH_TIMEOUT_MS,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (err) {
      const pid = launcherPid(launcher.pidFile);
      if (pid) killTree(pid);
      await removeLaunchFolder(launcher.dir, launcher.user);
      throw launchError(String((err as Error)?.message ?? err), this.opts.noSandbox);
    }
    const inst = new BrowserInstance(browser, launcher, this.opts.maxMemory, (i, bytes) =>
      this.lose(i, bytes),
    );
    this.all.add(inst);
    browser.on('disconnected', () => {
      // Crashed or killed: the next render launches another; whatever is left of it goes.
      if (this.current === inst) this.current = undefined;
      if (!inst.dead) inst.kill();
      this.all.delete(inst);
    });
    if (this.closed) {
      await inst.end();
      throw new Error('the renderer has shut down');
    }
    this.current = inst;
    this.opts.log?.(`Chromium started (pid ${inst.pid ?? '?'})`);
    return inst;
  }

  /** A context is done: the browser is retired when it has done enough or grown too large. */
  async release(inst: BrowserInstance, ctx: BrowserContext): Promise<void> {
    if (inst.dead) {
      // Killed under it: nothing is left to close.
      inst.closed();
      return;
    }
    const closed = await within(
      ctx.close().then(() => true),
      CONTEXT_CLOSE_MS,
      false,
    );
    inst.closed();
    if (!closed) {
      this.opts.log?.(`a browser context did not close in ${CONTEXT_CLOSE_MS} ms: Chromium is killed`);
      if (this.current === inst) this.current = undefined;
      inst.kill();
      return;
    }
    if (!inst.retired && (await this.tooWorn(inst))) {
      inst.retired = true;
      if (this.current === inst) this.current = undefined;
    }
    if (inst.retired && inst.open === 0) {
      this.all.delete(inst);
      await inst.end();
    }
  }

  private async tooWorn(inst: BrowserInstance): Promise<boolean> {
    if (inst.renders >= this.opts.recycleAfter) return true;
    const now = Date.now();
    if (now - inst.memoryReadAt < MEMORY_READ_EVERY_MS) return false;
    inst.memoryReadAt = now;
    return (await inst.memory.measure()) > this.opts.maxMemory;
  }

  /** A render took the browser over its memory limit: every render on it ends, and it is replaced. */
  private lose(inst: BrowserInstance, bytes: number): void {
    if (inst.dead) return;
    const mib = (n: number) => Math.round(n / 2 ** 20);
    this.opts.log?.(
      `Chromium's processes took ${mib(bytes)} MiB, over SIFT_RENDER_MAX_MEMORY (${mib(this.opts.maxMemory)} MiB): its renders end render_too_costly and it is replaced`,
    );
    inst.retired = true;
    if (this.current === inst) this.current = undefined;
    inst.lose(renderTooCostly(this.opts.maxMemory));
  }

  /** The processes of the current browser (the launcher first), for tests and metrics. */
  processes(): number[] {
    const pid = this.current?.pid;
    return pid ? processTree(pid) : [];
  }

  /** Contexts open now, over every browser. */
  openContexts(): number {
    return [...this.all].reduce((n, i) => n + i.browser.contexts().length, 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.launching?.catch(() => undefined);
    await Promise.all([...this.all].map((i) => i.end()));
    this.all.clear();
    this.current = undefined;
  }
}

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`);

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/**
 * What the driver said of a launch that failed: its first line, or where Chromium's sandbox would
 * not start (the driver's words for it, and Chromium's own), Chromium's line and the way out.
 */
function launchError(text: string, noSandbox?: boolean): LaunchError {
  const plain = text.replace(ANSI, '');
  const first = plain.split('\n')[0].slice(0, 300);
  if (noSandbox || !/sandboxing failed|No usable sandbox|crbug\.com\/(357670|638180)/.test(plain))
    return new LaunchError(first);
  const chromium = /\[err\] \[[^\]]*\] ([^\n]*sandbox[^\n]*)/i.exec(plain)?.[1]?.slice(0, 300);
  return new LaunchError(
    `its sandbox would not start (${chromium ?? first}); SIFT_CHROMIUM_NO_SANDBOX=1 runs it without one`,
  );
}

/** A context lent to one render, given back with release(). */
export class Lease {
  private released?: Promise<void>;

  constructor(
    private readonly host: BrowserHost,
    private readonly inst: BrowserInstance,
    readonly context: BrowserContext,
  ) {}

  /** Aborted when the browser is killed under the render; the reason is what the render ends with. */
  get lost(): AbortSignal {
    return this.inst.lost;
  }

  release(): Promise<void> {
    this.released ??= this.host.release(this.inst, this.context);
    return this.released;
  }
}
