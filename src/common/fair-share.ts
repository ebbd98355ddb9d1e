/**
 * The one scheduler of every pool callers share (extraction workers, browser pages, document
 * parsers, MCP servers; SPEC "Callers held apart on every surface"). Each caller has a queue of its
 * own, served round robin. While another caller waits, no caller is given more than its share,
 * ceil(places / callers waiting or holding); when every caller that waits has its share, a free
 * place goes to the one holding the fewest, so no place idles while work waits. A restricted
 * caller never holds more than half the places (at least one).
 *
 * A caller's key is `class:name` (callerKeyOf): a key starting with `restricted:` is a restricted
 * caller's.
 */
export class FairShare<T> {
  /** Callers with work waiting, in the order they are served next (a served caller goes last). */
  private readonly waiting = new Map<string, T[]>();
  /** Places each caller holds. */
  private readonly holding = new Map<string, number>();
  private count = 0;

  constructor(readonly places: number) {}

  /** Work waiting. */
  get length(): number {
    return this.count;
  }

  push(caller: string, item: T): void {
    const queue = this.waiting.get(caller);
    if (queue) queue.push(item);
    else this.waiting.set(caller, [item]);
    this.count++;
  }

  /** The next work to start and its caller, counted as holding a place until `release`. */
  take(): { caller: string; item: T } | undefined {
    const share = this.share();
    let pick: string | undefined;
    for (const c of this.waiting.keys()) {
      if (this.held(c) < Math.min(share, this.cap(c))) {
        pick = c;
        break;
      }
    }
    if (pick === undefined) {
      for (const c of this.waiting.keys()) {
        if (this.held(c) >= this.cap(c)) continue;
        if (pick === undefined || this.held(c) < this.held(pick)) pick = c;
      }
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

  /**
   * Counts a place for work that need not queue: none waits, and the caller is within its share.
   * False otherwise (the work is pushed and taken in turn). The caller checks a place is free.
   */
  admit(caller: string): boolean {
    if (this.count > 0 || this.held(caller) >= this.fairShare(caller)) return false;
    this.holding.set(caller, this.held(caller) + 1);
    return true;
  }

  /** The caller's work is done with its place. */
  release(caller: string): void {
    const n = this.held(caller) - 1;
    if (n > 0) this.holding.set(caller, n);
    else this.holding.delete(caller);
  }

  /**
   * Work taken but not done (its place was lost, or given up for another caller) goes back to the
   * head of its caller's queue, and its caller's place is released.
   */
  putBack(caller: string, item: T): void {
    this.release(caller);
    this.pushFront(caller, item);
  }

  /** Work that comes back (its earlier start was given up) waits first in its caller's queue. */
  pushFront(caller: string, item: T): void {
    const queue = this.waiting.get(caller);
    if (queue) queue.unshift(item);
    else this.waiting.set(caller, [item]);
    this.count++;
  }

  /** Takes waiting work out (its caller gave up); false when it was not waiting. */
  remove(caller: string, item: T): boolean {
    const queue = this.waiting.get(caller);
    const i = queue ? queue.indexOf(item) : -1;
    if (!queue || i < 0) return false;
    queue.splice(i, 1);
    if (queue.length === 0) this.waiting.delete(caller);
    this.count--;
    return true;
  }

  /** Every waiting work, taken out (the pool is closing). */
  drain(): T[] {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    this.count = 0;
    return all;
  }

  /** Places the caller holds. */
  held(caller: string): number {
    return this.holding.get(caller) ?? 0;
  }

  /** The most places the caller may hold while others wait: its share, within its class's cap. */
  fairShare(caller: string): number {
    return Math.min(this.share(), this.cap(caller));
  }

  /** Callers waiting that hold less than their fair share, in the order they are served. */
  wronged(): string[] {
    return [...this.waiting.keys()].filter((c) => this.held(c) < this.fairShare(c));
  }

  /** Callers holding more than their fair share, the furthest over first. */
  overShare(): string[] {
    const over = [...this.holding.keys()].filter((c) => this.held(c) > this.fairShare(c));
    return over.sort((a, b) => this.held(b) - this.fairShare(b) - (this.held(a) - this.fairShare(a)));
  }

  /** ceil(places / callers waiting or holding). */
  private share(): number {
    let callers = this.waiting.size;
    for (const c of this.holding.keys()) if (!this.waiting.has(c)) callers++;
    return Math.ceil(this.places / Math.max(1, callers));
  }

  private cap(caller: string): number {
    return caller.startsWith('restricted:') ? Math.max(1, Math.floor(this.places / 2)) : this.places;
  }
}
