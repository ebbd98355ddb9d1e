import type { LookupAddress } from 'node:dns';
import { FetchError } from '../common/errors';

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export interface DnsGuardOptions {
  /** A lookup (its wait for a slot included) that takes longer fails with dns_error. */
  timeoutMs: number;
  /** Lookups one caller may have in flight; further ones wait for a slot. */
  perCaller: number;
  /** How long an answer is reused by the connection that follows it (and by other fetches). */
  reuseMs?: number;
}

/**
 * Lookups with a deadline and a per-caller cap. The system resolver runs on libuv's small thread
 * pool and cannot be cancelled: a caller who names black-holed zones would otherwise hold every
 * thread and stall everyone's fetches. A caller's slot is held until its lookup really settles,
 * not just until the caller stopped waiting, so one caller never holds more than `perCaller`
 * threads. The answer a fetch waited for is the one its connection uses (pinned: no second lookup
 * that DNS rebinding could answer differently).
 */
export class DnsGuard {
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly answers = new Map<string, { addrs: LookupAddress[]; until: number }>();
  private readonly reuseMs: number;

  constructor(
    private readonly resolver: Resolver,
    private readonly opts: DnsGuardOptions,
  ) {
    this.reuseMs = opts.reuseMs ?? 10_000;
  }

  /** The answer for `host`, looked up on behalf of `caller` unless a recent one is at hand. */
  async resolve(host: string, caller: string): Promise<LookupAddress[]> {
    const key = host.toLowerCase();
    const recent = this.recent(key);
    if (recent) return recent;
    const deadline = Date.now() + this.opts.timeoutMs;
    await this.slot(caller, host, deadline);
    const lookup = this.resolver(host).finally(() => this.release(caller));
    const addrs = await withDeadline(lookup, deadline, host, this.opts.timeoutMs);
    this.answers.set(key, { addrs, until: Date.now() + this.reuseMs });
    if (this.answers.size > 4096) this.prune();
    return addrs;
  }

  /** A fresh answer given by resolve(); else a lookup bounded by the timeout, outside any caller's cap. */
  async forConnection(host: string): Promise<LookupAddress[]> {
    const recent = this.recent(host.toLowerCase());
    if (recent) return recent;
    return withDeadline(this.resolver(host), Date.now() + this.opts.timeoutMs, host, this.opts.timeoutMs);
  }

  private recent(key: string): LookupAddress[] | undefined {
    const a = this.answers.get(key);
    if (a && a.until > Date.now()) return a.addrs;
    if (a) this.answers.delete(key);
    return undefined;
  }

  private prune(): void {
    const now = Date.now();
    for (const [k, a] of this.answers) if (a.until <= now) this.answers.delete(k);
  }

  private slot(caller: string, host: string, deadline: number): Promise<void> {
    const n = this.held.get(caller) ?? 0;
    if (n < this.opts.perCaller) {
      this.held.set(caller, n + 1);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(caller) ?? [];
      this.waiting.set(caller, queue);
      const take = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(
        () => {
          queue.splice(queue.indexOf(take), 1);
          reject(timeoutError(host, this.opts.timeoutMs));
        },
        Math.max(0, deadline - Date.now()),
      );
      queue.push(take);
    });
  }

  /** A settled lookup frees its caller's slot, handing it straight to the next waiter. */
  private release(caller: string): void {
    const next = this.waiting.get(caller)?.shift();
    if (next) return next();
    const n = (this.held.get(caller) ?? 1) - 1;
    if (n > 0) this.held.set(caller, n);
    else {
      this.held.delete(caller);
      this.waiting.delete(caller);
    }
  }

  /** Lookups in flight for a caller (tests and metrics). */
  inFlight(caller: string): number {
    return this.held.get(caller) ?? 0;
  }
}

function timeoutError(host: string, ms: number): FetchError {
  return new FetchError('dns_error', `${host} did not resolve within ${ms} ms`);
}

function withDeadline<T>(p: Promise<T>, deadline: number, host: string, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timeoutError(host, ms)), Math.max(0, deadline - Date.now()));
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e as Error);
      },
    );
  });
}
