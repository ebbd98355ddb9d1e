import type { CallerClass } from '../config/app-config';
import { SiftError } from '../common/errors';

/**
 * How many renders each caller may have in flight: at most its class's number (more is 429 at
 * once: waiting would only hold the caller's other requests). Which of them runs when is the
 * pages' scheduler's (FairSlots, in Renderer).
 */
export class CallerRenders {
  private readonly perCaller = new Map<string, number>();

  constructor(private readonly callerCap: Record<CallerClass, number>) {}

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
}
