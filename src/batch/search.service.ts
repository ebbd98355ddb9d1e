import { Injectable } from '@nestjs/common';
import { callerKeyOf, Dcache, type SearchHit } from '../dcache';
import type { Caller } from '../pages/caller-policy';

/** What a search asks: POST /v1/search's body, the MCP search tool's arguments. */
export interface SearchQuery {
  query: string;
  jobs?: string[];
  site?: string;
  limit?: number;
}

/** The words of a query: letters and digits, each run a word, at most 32 of them. */
export const wordsOf = (query: string) => (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 32);

/**
 * Search what you fetched: the pages of a caller's own jobs' results (batches, crawls, monitor
 * runs), found by their words and ranked (dcache/search-store.ts). A page is found from the commit
 * that stores its result, and no longer once its job is deleted or swept; another caller's never.
 */
@Injectable()
export class SearchService {
  constructor(private readonly dcache: Dcache) {}

  async search(caller: Caller, q: SearchQuery): Promise<{ hits: SearchHit[] }> {
    const hits = await this.dcache.search.search({
      owner: callerKeyOf(caller),
      words: wordsOf(q.query),
      jobs: q.jobs,
      site: q.site?.toLowerCase(),
      limit: q.limit ?? 10,
    });
    return { hits };
  }
}
