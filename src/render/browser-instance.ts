import type { Browser } from 'playwright-core';
import { MemoryWatch } from './browser-memory';
import { removeLaunchFolder, type Launcher } from './chromium-launcher';
import { killTree, launcherPid } from './chromium-process';

/** How long a context may take to close before its browser is killed. */
export const CONTEXT_CLOSE_MS = 5000;

/** One launched Chromium, the contexts it has open and the renders it has done. */
export class BrowserInstance {
  open = 0;
  renders = 0;
  retired = false;
  dead = false;
  /** When its memory was last read after a render. */
  memoryReadAt = 0;
  /** Read on a timer while it has contexts open. */
  readonly memory: MemoryWatch;
  private readonly lost$ = new AbortController();

  constructor(
    readonly browser: Browser,
    private readonly launcher: Launcher,
    maxMemory: number,
    overMemory: (inst: BrowserInstance, bytes: number) => void,
  ) {
    this.memory = new MemoryWatch(
      () => this.pid,
      maxMemory,
      (bytes) => overMemory(this, bytes),
    );
  }

  get pid(): number | undefined {
    return launcherPid(this.launcher.pidFile);
  }

  /** Aborted, with the reason, when the browser is killed under its renders. */
  get lost(): AbortSignal {
    return this.lost$.signal;
  }

  /** A context is opened on it: its memory is read while any is. */
  opened(): void {
    if (this.open++ === 0) this.memory.start();
  }

  closed(): void {
    if (--this.open === 0) this.memory.stop();
  }

  /** Its renders end with `reason`, and it is killed. */
  lose(reason: Error): void {
    this.lost$.abort(reason);
    this.kill();
  }

  /** Closes the browser; killed when it does not close in time. */
  async end(): Promise<void> {
    if (this.dead) {
      await this.cleanUp();
      return;
    }
    this.dead = true;
    this.memory.stop();
    const closed = await within(
      this.browser.close().then(() => true),
      CONTEXT_CLOSE_MS,
      false,
    );
    if (!closed) this.kill();
    await this.cleanUp();
  }

  kill(): void {
    this.dead = true;
    this.memory.stop();
    const pid = this.pid;
    if (pid) killTree(pid);
    void this.cleanUp();
  }

  private cleanUp(): Promise<boolean> {
    return removeLaunchFolder(this.launcher.dir, this.launcher.user);
  }
}

/** `p`'s value, or `otherwise` if it has not settled (or failed) within `ms`. */
export function within<T>(p: Promise<T>, ms: number, otherwise: T): Promise<T> {
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
