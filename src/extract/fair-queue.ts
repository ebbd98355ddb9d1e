/**
 * Pages waiting for an extraction worker, a queue per caller, served round robin. While another
 * caller waits, no caller is given more than its share of the workers: ceil(workers / callers
 * with pages waiting or being extracted). When every caller that waits already has its share,
 * the worker goes to the one holding the fewest, so no worker idles while a page waits.
 */
export class FairQueue<T> {
  /** Callers with pages waiting, in the order they are served next (a served caller goes last). */
  private readonly waiting = new Map<string, T[]>();
  /** Workers each caller holds. */
  private readonly holding = new Map<string, number>();
  private count = 0;

  constructor(private readonly workers: number) {}

  /** Pages waiting. */
  get length(): number {
    return this.count;
  }

  push(caller: string, item: T): void {
    const queue = this.waiting.get(caller);
    if (queue) queue.push(item);
    else this.waiting.set(caller, [item]);
    this.count++;
  }

  /** The next page to start and its caller, counted as holding a worker until `release`. */
  take(): { caller: string; item: T } | undefined {
    let callers = this.waiting.size;
    for (const c of this.holding.keys()) if (!this.waiting.has(c)) callers++;
    const share = Math.ceil(this.workers / Math.max(1, callers));
    let pick: string | undefined;
    for (const c of this.waiting.keys()) {
      if (this.held(c) < share) {
        pick = c;
        break;
      }
    }
    if (pick === undefined) {
      for (const c of this.waiting.keys()) if (pick === undefined || this.held(c) < this.held(pick)) pick = c;
    }
    if (pick === undefined) return undefined;
    const queue = this.waiting.get(pick)!;
    const item = queue.shift()!;
    this.waiting.delete(pick);
    if (queue.length > 0) this.waiting.set(pick, queue);
    this.holding.set(pick, this.held(pick) + 1);
    this.count--;
    return { caller: pick, item };
  }

  /** The caller's page is done with its worker. */
  release(caller: string): void {
    const n = this.held(caller) - 1;
    if (n > 0) this.holding.set(caller, n);
    else this.holding.delete(caller);
  }

  /**
   * A page taken but never started (its worker was lost) goes back to the head of its caller's
   * queue, and its caller's worker is released.
   */
  putBack(caller: string, item: T): void {
    this.release(caller);
    const queue = this.waiting.get(caller);
    if (queue) queue.unshift(item);
    else this.waiting.set(caller, [item]);
    this.count++;
  }

  /** Every waiting page, taken out (the pool is closing). */
  drain(): T[] {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    this.count = 0;
    return all;
  }

  private held(caller: string): number {
    return this.holding.get(caller) ?? 0;
  }
}
