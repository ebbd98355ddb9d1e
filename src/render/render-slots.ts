import type { CallerClass } from '../config/app-config';
import { SiftError } from '../common/errors';

/**
 * Who may render now: at most `pages` renders at once over all callers (the others wait, in the
 * order they came, until their deadline), and at most the class's number per caller (more is
 * 429 at once: waiting would only hold the caller's other requests).
 */
export class RenderSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly perCaller = new Map<string, number>();

  constructor(
    private readonly pages: number,
    private readonly callerCap: Record<CallerClass, number>,
  ) {}

  /** Counts the caller in, or throws too_many_requests; call leave() once done. */
  enter(who: string, callerClass: CallerClass): void {
    const n = this.perCaller.get(who) ?? 0;
    const cap = this.callerCap[callerClass];
    if (n >= cap) {
      throw new SiftError(
        429,
        'too_many_requests',
        `this caller has ${n} renders in flight, as many as a ${callerClass} caller may`,
        'wait for a render to end, or send render: "never"',
      ).retryAfter(1);
    }
    this.perCaller.set(who, n + 1);
  }

  leave(who: string): void {
    const n = (this.perCaller.get(who) ?? 1) - 1;
    if (n > 0) this.perCaller.set(who, n);
    else this.perCaller.delete(who);
  }

  /** Resolves once a page is free; rejects with the signal's reason if it aborts first. */
  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.running < this.pages) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(turn);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(turn);
    });
  }

  /** A page is free: it goes straight to the next waiter. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  /** Renders running now. */
  get busy(): number {
    return this.running;
  }
}
