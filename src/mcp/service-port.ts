import { BatchService } from '../batch/batch.service';
import { MapService } from '../crawl/map.service';
import { PageService } from '../pages/page.service';
import type { Caller } from '../pages/caller-policy';
import {
  optionsOf,
  pageOfContent,
  type BatchSubmitArgs,
  type CrawlArgs,
  type FetchArgs,
  type MapArgs,
  type ResultsPage,
  type SiftPort,
} from './tools';

/** The services an in-process port calls. */
export interface SiftServices {
  pages: PageService;
  batch: BatchService;
  maps: MapService;
  /** Takes a place among the caller's fetches in flight or throws 429; returns its release. */
  admit?: AdmitFetch;
}

export type AdmitFetch = (caller: Caller) => () => void;

/** `work` holding one of the caller's fetch places, when a cap is given. */
async function admitted<T>(s: SiftServices, caller: Caller, work: () => Promise<T>): Promise<T> {
  const leave = s.admit?.(caller);
  try {
    return await work();
  } finally {
    leave?.();
  }
}

/**
 * The tools' port over sift's own services, every call as `caller`: its class, its limits and
 * its address policy apply as they do to the REST API.
 */
export function servicePort(s: SiftServices, caller: Caller, signal?: () => AbortSignal): SiftPort {
  return {
    // A cache hit asked again for the same page of content is answered with the text written the
    // first time (PageService.fetchWritten).
    fetchPage: (args: FetchArgs, offset: number, maxChars: number) =>
      admitted(s, caller, () =>
        s.pages.fetchWritten(caller, args, signal, `mcp ${offset} ${maxChars}`, (e) =>
          JSON.stringify(pageOfContent(e, offset, maxChars)),
        ),
      ),
    async batchSubmit(a: BatchSubmitArgs) {
      const { job } = await s.batch.submit(caller, {
        targets: a.urls.map((url) => ({ url })),
        options: optionsOf(a),
        ...(a.ttl_s === undefined ? {} : { ttl_s: a.ttl_s }),
      });
      return job;
    },
    batchStatus: (id) => s.batch.get(caller, id),
    async batchResults(id, cursor, limit) {
      return JSON.parse(await s.batch.resultsJson(caller, id, { after: cursor, limit })) as ResultsPage;
    },
    async crawl(a: CrawlArgs) {
      const { url, limit, max_depth, include_paths, exclude_paths, sitemap } = a;
      const { job } = await s.batch.submitCrawl(caller, {
        ...strip({ url, limit, max_depth, include_paths, exclude_paths, sitemap }),
        url,
        options: optionsOf(a),
      });
      return job;
    },
    map: (a: MapArgs) => admitted(s, caller, () => s.maps.map(caller, strip(a), signal?.())),
    cancel: (id) => s.batch.cancel(caller, id),
  };
}

/** Without its undefined fields (the services tell a field left out from one set). */
function strip<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
