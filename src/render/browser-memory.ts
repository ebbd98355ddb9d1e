import { processTree, treeMemoryAsync, treeResident } from './chromium-process';

/** How often a browser's memory is read while it has renders in flight (SPEC: at least every 250 ms). */
export const MEMORY_SAMPLE_MS = 200;
/** While the resident sizes are over the limit, the proportional set sizes are read at least this often. */
const CONFIRM_EVERY_MS = 1000;

/**
 * The memory of one browser's processes, read on a timer while it renders. The limit is on their
 * proportional set sizes, which the kernel sums by walking every page table (tens of milliseconds
 * at a few GB); their resident sizes are a count it keeps, cheap to read, and never less. So each
 * sample reads the resident sizes, and the proportional ones (off the main thread) only when the
 * resident sizes are over the limit and have grown by more than the room the last reading left,
 * or that reading is a second old: in between, the proportional sizes cannot have passed the limit
 * (they grow no faster than the resident ones).
 */
export class MemoryWatch {
  private timer?: NodeJS.Timeout;
  private reading = false;
  private confirmed?: { resident: number; pss: number; at: number };

  constructor(
    private readonly root: () => number | undefined,
    private readonly max: number,
    private readonly over: (bytes: number) => void,
  ) {}

  /** Samples from now on, until stop(). */
  start(): void {
    this.timer ??= setInterval(() => void this.sample(), MEMORY_SAMPLE_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * The processes' memory as far as the limit goes, in bytes: exact (their proportional set
   * sizes) when over it; within it, a bound from above.
   */
  async measure(): Promise<number> {
    const pid = this.root();
    if (pid === undefined) return 0;
    const pids = processTree(pid);
    const resident = treeResident(pids);
    if (resident <= this.max) return resident;
    const now = Date.now();
    const c = this.confirmed;
    if (c && c.pss <= this.max && now - c.at < CONFIRM_EVERY_MS) {
      const grown = Math.max(0, resident - c.resident);
      if (c.pss + grown <= this.max) return c.pss + grown;
    }
    const pss = await treeMemoryAsync(pids);
    this.confirmed = { resident, pss, at: now };
    return pss;
  }

  private async sample(): Promise<void> {
    // A reading of a large browser can take longer than a period: the next one waits for it.
    if (this.reading) return;
    this.reading = true;
    try {
      const bytes = await this.measure();
      if (bytes > this.max && this.timer) this.over(bytes);
    } finally {
      this.reading = false;
    }
  }
}
