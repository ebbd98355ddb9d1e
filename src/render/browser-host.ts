import * as fs from 'node:fs';
import * as os from 'node:os';
import type { Browser, BrowserContext } from 'playwright-core';
import { isExecutable } from '../config/parsers';
import {
  CHROMIUM_ARGS,
  chromiumLauncher,
  killTree,
  launcherPid,
  sweepLeftovers,
  processTree,
  treeMemory,
} from './chromium-process';

export interface BrowserHostOptions {
  chromiumPath: string;
  /** The browser is replaced after this many renders. */
  recycleAfter: number;
  /** … or once its processes together use more memory than this (bytes). */
  maxMemory: number;
  /** The proxy every request of the browser's own goes to (and is refused there: no credentials). */
  proxyPort: () => number;
  log?: (message: string) => void;
}

/** Chromium would not start. */
export class LaunchError extends Error {}

/** How long a context may take to close before its browser is killed. */
export const CONTEXT_CLOSE_MS = 5000;
const LAUNCH_TIMEOUT_MS = 30_000;

/** A browser's memory is read after a render at most this often. */
const MEMORY_READ_EVERY_MS = 1000;

/** One launched Chromium, the contexts it has open and the renders it has done. */
export class BrowserInstance {
  open = 0;
  renders = 0;
  retired = false;
  dead = false;
  /** When its memory was last read (reading it walks every process's page tables: ~20 ms). */
  memoryReadAt = 0;

  constructor(
    readonly browser: Browser,
    private readonly launcher: { dir: string; pidFile: string },
  ) {}

  get pid(): number | undefined {
    return launcherPid(this.launcher.pidFile);
  }

  /** Closes the browser; killed when it does not close in time. */
  async end(): Promise<void> {
    if (this.dead) return this.cleanUp();
    this.dead = true;
    const closed = await within(
      this.browser.close().then(() => true),
      CONTEXT_CLOSE_MS,
      false,
    );
    if (!closed) this.kill();
    this.cleanUp();
  }

  kill(): void {
    this.dead = true;
    const pid = this.pid;
    if (pid) killTree(pid);
    this.cleanUp();
  }

  private cleanUp(): void {
    fs.rmSync(this.launcher.dir, { recursive: true, force: true });
  }
}

/**
 * One browser per instance, launched on first use; a context per render. The browser is replaced
 * after `recycleAfter` renders or above `maxMemory` (the one retired closes once its last context
 * has), relaunched after a crash, and killed with all its processes when a context will not close.
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
    const inst = await this.instance();
    inst.open++;
    inst.renders++;
    try {
      const ctx = await inst.browser.newContext(options);
      return new Lease(this, inst, ctx);
    } catch (err) {
      inst.open--;
      throw err;
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
    const swept = sweepLeftovers();
    if (swept > 0)
      this.opts.log?.(`removed what ${swept} browser(s) of ended processes left in ${os.tmpdir()}`);
    const launcher = chromiumLauncher(this.opts.chromiumPath);
    let browser: Browser;
    try {
      // Loaded on the first launch: the driver is about 75 MB of memory an instance that never
      // renders does not need.
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({
        executablePath: launcher.executable,
        headless: true,
        // As root, Chromium's sandbox will not start; the proxy and the flags above are what hold.
        chromiumSandbox: process.getuid?.() !== 0,
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
      fs.rmSync(launcher.dir, { recursive: true, force: true });
      throw new LaunchError(
        String((err as Error)?.message ?? err)
          .split('\n')[0]
          .slice(0, 300),
      );
    }
    const inst = new BrowserInstance(browser, launcher);
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
    const closed = await within(
      ctx.close().then(() => true),
      CONTEXT_CLOSE_MS,
      false,
    );
    inst.open--;
    if (!closed) {
      this.opts.log?.(`a browser context did not close in ${CONTEXT_CLOSE_MS} ms: Chromium is killed`);
      if (this.current === inst) this.current = undefined;
      inst.kill();
      return;
    }
    if (!inst.retired && this.tooWorn(inst)) {
      inst.retired = true;
      if (this.current === inst) this.current = undefined;
    }
    if (inst.retired && inst.open === 0) {
      this.all.delete(inst);
      await inst.end();
    }
  }

  private tooWorn(inst: BrowserInstance): boolean {
    if (inst.renders >= this.opts.recycleAfter) return true;
    const pid = inst.pid;
    const now = Date.now();
    if (pid === undefined || now - inst.memoryReadAt < MEMORY_READ_EVERY_MS) return false;
    inst.memoryReadAt = now;
    return treeMemory(processTree(pid)) > this.opts.maxMemory;
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

/** A context lent to one render, given back with release(). */
export class Lease {
  private released?: Promise<void>;

  constructor(
    private readonly host: BrowserHost,
    private readonly inst: BrowserInstance,
    readonly context: BrowserContext,
  ) {}

  release(): Promise<void> {
    this.released ??= this.host.release(this.inst, this.context);
    return this.released;
  }
}

/** `p`'s value, or `otherwise` if it has not settled (or failed) within `ms`. */
function within<T>(p: Promise<T>, ms: number, otherwise: T): Promise<T> {
  return new Promise<T>((resolve) => {
    const timer = setTimeout(() => resolve(otherwise), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      () => {
        clearTimeout(timer);
        resolve(otherwise);
      },
    );
  });
}
