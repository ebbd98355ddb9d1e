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

/** A place held: given back with `release()`; `preempted` aborts when it must be given up. */
export interface Hold {
  release(): void;
  readonly preempted: AbortSignal;
}

interface Waiter {
  resolve: (h: Hold) => void;
  reject: (e: Error) => void;
  preemptible: boolean;
}

interface Running {
  caller: string;
  preemptible: boolean;
  /** Asked to give its place up. */
  asked: boolean;
  /** Made when the holder first reads `preempted` (most never do). */
  ac?: AbortController;
  released: boolean;
}

/** Why a hold was preempted: another caller waited for its share. */
export class Preempted extends Error {
  readonly code = 'preempted';
  constructor() {
    super('the place was given to another caller that waited for its share');
  }
}

/**
 * FairShare over a pool of `places` as promises: `acquire` waits for a place (until its signal
 * aborts: a request's deadline counts its wait); `release` gives it to the next. A preemptible hold
 * is asked to give its place up (its `preempted` signal aborts) when a caller waits with less than
 * its share while the holder's caller has more than its own and no place is free: the holder's
 * youngest such hold goes, and its work starts again later from its caller's queue, within its
 * own deadline. Work that cannot stop half way (an extraction, an MCP call) is not preemptible.
 */
export class FairSlots {
  private readonly queue: FairShare<Waiter>;
  private readonly running: Running[] = [];
  private busy = 0;

  constructor(places: number) {
    this.queue = new FairShare<Waiter>(Math.max(1, places));
  }

  /** Places in the pool. */
  get places(): number {
    return this.queue.places;
  }

  /** Places held now. */
  get inUse(): number {
    return this.busy;
  }

  /** Callers' work waiting for a place. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * A place for `caller`; rejects with the signal's reason if it aborts first. `front`: the work
   * was preempted and comes back, ahead of its caller's other work.
   */
  acquire(
    caller: string,
    opts: { signal?: AbortSignal; preemptible?: boolean; front?: boolean } = {},
  ): Promise<Hold> {
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<Hold>((resolve, reject) => {
      const onAbort = () => {
        if (this.queue.remove(caller, waiter)) reject(signal!.reason as Error);
      };
      const waiter: Waiter = {
        preemptible: opts.preemptible === true,
        resolve: (h) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(h);
        },
        reject,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.front) this.queue.pushFront(caller, waiter);
      else this.queue.push(caller, waiter);
      this.dispatch();
    });
  }

  /**
   * A place at once when one is free and no work waits (no promise, no signal: the common case
   * costs nothing), else undefined and the caller acquires.
   */
  tryAcquire(caller: string, opts: { preemptible?: boolean } = {}): Hold | undefined {
    if (this.busy >= this.queue.places || !this.queue.admit(caller)) return undefined;
    this.busy++;
    return this.grant(caller, opts.preemptible === true);
  }

  /** The caller's count of places held, as FairShare keeps it (for tests and metrics). */
  held(caller: string): number {
    return this.queue.held(caller);
  }

  private dispatch(): void {
    while (this.busy < this.queue.places) {
      const next = this.queue.take();
      if (!next) break;
      this.busy++;
      next.item.resolve(this.grant(next.caller, next.item.preemptible));
    }
    if (this.busy >= this.queue.places) this.preempt();
  }

  private grant(caller: string, preemptible: boolean): Hold {
    const run: Running = { caller, preemptible, asked: false, released: false };
    this.running.push(run);
    return {
      get preempted() {
        if (!run.ac) {
          run.ac = new AbortController();
          if (run.asked) run.ac.abort(new Preempted());
        }
        return run.ac.signal;
      },
      release: () => {
        if (run.released) return;
        run.released = true;
        this.running.splice(this.running.indexOf(run), 1);
        this.busy--;
        this.queue.release(caller);
        this.dispatch();
      },
    };
  }

  /**
   * Asks holds over their callers' share to give their places up, one for each caller waiting
   * under its share that no place given up already serves.
   */
  private preempt(): void {
    const owed = this.queue.wronged().length;
    let pending = this.running.filter((r) => r.asked).length;
    if (owed <= pending) return;
    for (const caller of this.queue.overShare()) {
      // Its holds beyond its share, youngest first, not already asked.
      let over = this.queue.held(caller) - this.queue.fairShare(caller);
      over -= this.running.filter((r) => r.caller === caller && r.asked).length;
      for (let i = this.running.length - 1; i >= 0 && over > 0 && pending < owed; i--) {
        const r = this.running[i];
        if (r.caller !== caller || !r.preemptible || r.asked) continue;
        r.asked = true;
        r.ac?.abort(new Preempted());
        pending++;
        over--;
      }
      if (pending >= owed) return;
    }
  }
}
