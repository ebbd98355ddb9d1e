import { FairShare } from './fair-share';

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
