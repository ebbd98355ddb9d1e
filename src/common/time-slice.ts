/** The longest a slice runs: a fifth of the 50 ms the SPEC allows, so an item's own cost fits. */
export const SLICE_MS = 10;

/**
 * Long work on the main thread cut into slices: a loop asks `due()` between its items and, once
 * the slice has lasted `sliceMs`, awaits `turn()`, which lets the event loop run timers, sockets
 * and other requests (setImmediate: a resolved promise would not, microtasks run before them).
 * So a loop over 50,000 URLs or a sitemap's 50 MiB holds the loop for a slice and one item at
 * most (SPEC "The main thread stays free").
 */
export class TimeSlicer {
  private started = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** The slice has lasted its time: the loop should `turn()` before its next item. */
  due(): boolean {
    return performance.now() - this.started >= this.sliceMs;
  }

  /** One turn of the event loop; the next slice starts when it comes back. */
  async turn(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.started = performance.now();
  }
}
