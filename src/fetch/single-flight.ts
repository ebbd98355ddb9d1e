import { FetchError, SiftError } from '../common/errors';

/** What one waiter brings to a shared fetch: its own deadline and its own way to give up. */
export interface Waiter {
  host: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** One load shared by every caller waiting for the same key. */
interface Flight<T> {
  value: Promise<T>;
  waiters: number;
  abort: AbortController;
}

/**
 * One load per key at a time. Every waiter keeps its own timeout and cancel: one giving up never
 * fails another, and the shared load is aborted only when no waiter is left.
 */
export class SingleFlight<T> {
  private readonly flights = new Map<string, Flight<T>>();

  async run(key: string, waiter: Waiter, load: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let flight = this.flights.get(key);
    if (!flight) {
      const f: Flight<T> = { waiters: 0, abort: new AbortController(), value: undefined as never };
      f.value = load(f.abort.signal).finally(() => this.forget(key, f));
      f.value.catch(() => undefined); // a load every waiter left is nobody's error
      this.flights.set(key, f);
      flight = f;
    }
    flight.waiters++;
    try {
      return await waitFor(flight.value, waiter);
    } finally {
      if (--flight.waiters === 0) {
        this.forget(key, flight);
        flight.abort.abort();
      }
    }
  }

  private forget(key: string, flight: Flight<T>): void {
    if (this.flights.get(key) === flight) this.flights.delete(key);
  }
}

/** The shared value, or this waiter's own timeout or cancel, whichever comes first. */
function waitFor<T>(value: Promise<T>, w: Waiter): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancelled = () =>
      reject(new SiftError(499, 'cancelled', 'the request was cancelled', 'nothing to do'));
    if (w.signal?.aborted) return cancelled();
    const timer = setTimeout(
      () => reject(new FetchError('timeout', `${w.host} did not answer in time`)),
      w.timeoutMs,
    );
    w.signal?.addEventListener('abort', cancelled, { once: true });
    value.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      w.signal?.removeEventListener('abort', cancelled);
    });
  });
}
