import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { SizedLru } from '../common/sized-lru';
import { callerKeyOf, pageDocOf, SearchStore } from '../dcache';
import type { Caller } from './caller-policy';
import type { FetchEnvelope } from './envelope';

/** A page indexed again unchanged at most this often (its time moves on, for the sweep). */
const REFRESH_MS = 3600_000;

/**
 * The pages callers fetch outside a job (/v1/fetch, a scrape, MCP's fetch), kept findable by
 * /v1/search: each caller's latest of a URL, written after the answer is made (a write that fails
 * is logged and the page stays unfindable; the answer is not held up). A page this process indexed
 * within the hour with the same digest is not written again.
 */
@Injectable()
export class FetchedPages {
  private readonly log = new Logger('search');
  private readonly indexed = new SizedLru<{ digest: string; atMs: number }>(1024 * 1024, () => 128);

  constructor(
    private readonly search: SearchStore,
    private readonly clock: Clock,
  ) {}

  remember(caller: Caller, e: FetchEnvelope): void {
    if (e.verdict !== 'ok') return;
    const doc = pageDocOf(e);
    if (!doc) return;
    const owner = callerKeyOf(caller);
    const key = `${owner} ${e.final_url}`;
    const now = this.clock.nowMs();
    const last = this.indexed.get(key);
    if (last?.digest === e.digest && now - last.atMs < REFRESH_MS) return;
    this.indexed.set(key, { digest: e.digest, atMs: now });
    this.search.indexFetch(owner, doc, now).catch((err: Error) => {
      this.indexed.delete(key);
      this.log.warn(`a fetched page was not indexed for search: ${err.message}`);
    });
  }
}
