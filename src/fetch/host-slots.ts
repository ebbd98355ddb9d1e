/**
 * At most `limit` upstream fetches per host at once in this process, over every job, caller and
 * /v1/fetch call; the rest wait in arrival order. (Batch claims also hold the limit over all
 * instances in the database; this covers what no claim counts: /v1/fetch, and a target between
 * its claim and its fetch.)
 */
export class HostSlots {
  private readonly busy = new Map<string, number>();
  private readonly queues = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  /** Waits for a slot of `host`; resolves to its release. Rejects if `signal` aborts first. */
  acquire(host: string, signal: AbortSignal): Promise<() => void> {
    const release = () => this.release(host);
    const n = this.busy.get(host) ?? 0;
    if (n < this.limit) {
      this.busy.set(host, n + 1);
      return Promise.resolve(once(release));
    }
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(host) ?? [];
      this.queues.set(host, queue);
      const take = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(once(release));
      };
      const onAbort = () => {
        const i = queue.indexOf(take);
        if (i >= 0) queue.splice(i, 1);
        if (queue.length === 0) this.queues.delete(host);
        reject(signal.reason as Error);
      };
      if (signal.aborted) return onAbort();
      queue.push(take);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Fetches in flight per host (for tests and metrics). */
  inFlight(host: string): number {
    return this.busy.get(host) ?? 0;
  }

  private release(host: string): void {
    const queue = this.queues.get(host);
    const next = queue?.shift();
    if (queue && queue.length === 0) this.queues.delete(host);
    // The slot passes straight to the next in line; otherwise it is freed.
    if (next) return next();
    const n = (this.busy.get(host) ?? 1) - 1;
    if (n > 0) this.busy.set(host, n);
    else this.busy.delete(host);
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
