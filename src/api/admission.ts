import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { SiftError } from '../common/errors';
import type { Caller } from '../pages/caller-policy';
import { callerKeyOf } from '../dcache';

export type Admitted = 'fetch' | 'stream';

const WHAT: Record<Admitted, [string, string]> = {
  fetch: ['fetches in flight', 'wait for one to finish, or send fewer at once'],
  stream: ['open event or NDJSON streams', 'close a stream you no longer read, or poll the JSON form'],
};

/**
 * Per-caller caps on what holds the server's resources while it runs: fetches in flight (/v1/fetch,
 * /v1/map, /v2/scrape, /v2/map, MCP fetch and map) and open streams. One caller past its cap gets
 * 429 too_many_requests; the others are not affected. The counts are this process's own: each
 * instance protects itself.
 */
@Injectable()
export class Admission {
  private readonly held: Record<Admitted, Map<string, number>> = { fetch: new Map(), stream: new Map() };

  constructor(private readonly config: AppConfig) {}

  /** Takes a place or throws 429; the returned function gives it back (once). */
  enter(kind: Admitted, caller: Caller): () => void {
    const limits = this.config.limits[caller.callerClass];
    const cap = kind === 'fetch' ? limits.fetchConcurrency : limits.maxStreams;
    const key = callerKeyOf(caller);
    const counts = this.held[kind];
    const n = counts.get(key) ?? 0;
    if (n >= cap) {
      const [what, hint] = WHAT[kind];
      throw new SiftError(
        429,
        'too_many_requests',
        `${caller.name} already has ${cap} ${what}, the most a ${caller.callerClass} caller may`,
        hint,
      ).retryAfter(1);
    }
    counts.set(key, n + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const m = (counts.get(key) ?? 1) - 1;
      if (m > 0) counts.set(key, m);
      else counts.delete(key);
    };
  }
}
