import { BatchService } from '../batch/batch.service';
import type { SearchService } from '../batch/search.service';
import {
  BatchSubmitDto,
  commandOf,
  CreateMonitorDto,
  CrawlSubmitDto,
  FetchRequestDto,
  MapRequestDto,
  ParseOptionsDto,
  ResultsQueryDto,
  SearchRequestDto,
} from '../commands';
import { MapService } from '../crawl';
import type { MonitorService } from '../monitors/monitor.service';
import { PageService } from '../pages/page.service';
import type { UploadService } from '../pages/upload.service';
import type { Caller } from '../pages/caller-policy';
import type { FetchEnvelope } from '../pages/envelope';
import { pageOfContent, type Body, type ResultsPage, type SiftPort } from './tools';

/** The services an in-process port calls. */
export interface SiftServices {
  pages: PageService;
  uploads: UploadService;
  batch: BatchService;
  maps: MapService;
  monitors: MonitorService;
  search: SearchService;
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
 * its address policy apply as they do to the REST API. Each body is first made the command its
 * REST route makes, by the same DTO and pipe, so a tool accepts nothing the route refuses and
 * refuses in the route's words; no service is called for a refused one.
 */
export function servicePort(s: SiftServices, caller: Caller, signal?: () => AbortSignal): SiftPort {
  return {
    async fetchPage(body: Body, offset: number, maxChars: number, maxTokens?: number) {
      const req = await commandOf(FetchRequestDto, body);
      return admitted(s, caller, async () => {
        const { envelope } = await s.pages.fetchDetailed(caller, req, signal);
        s.pages.remember(caller, envelope);
        return pageOfContent(
          envelope as FetchEnvelope & Record<string, unknown>,
          offset,
          maxChars,
          maxTokens,
        );
      });
    },
    async parsePage(file, body, offset, maxChars, maxTokens) {
      const options = await commandOf(ParseOptionsDto, body);
      return admitted(s, caller, async () => {
        const envelope = await s.uploads.parse(
          caller,
          file,
          options,
          signal?.() ?? new AbortController().signal,
        );
        return pageOfContent(
          envelope as FetchEnvelope & Record<string, unknown>,
          offset,
          maxChars,
          maxTokens,
        );
      });
    },
    async batchSubmit(body: Body) {
      const { job } = await s.batch.submit(caller, await commandOf(BatchSubmitDto, body));
      return job;
    },
    batchStatus: (id) => s.batch.get(caller, id),
    async batchResults(id, cursor, limit) {
      const q = await commandOf(ResultsQueryDto, { after: cursor, limit }, 'query');
      const page = await s.batch.resultsJson(caller, id, {
        after: q.after ?? cursor,
        limit: q.limit ?? limit,
      });
      return JSON.parse(page) as ResultsPage;
    },
    async crawl(body: Body) {
      const { job } = await s.batch.submitCrawl(caller, await commandOf(CrawlSubmitDto, body));
      return job;
    },
    async map(body: Body) {
      const req = await commandOf(MapRequestDto, body);
      return admitted(s, caller, () => s.maps.map(caller, req, signal?.()));
    },
    cancel: (id) => s.batch.cancel(caller, id),
    monitorCreate: async (body) => s.monitors.create(caller, await commandOf(CreateMonitorDto, body)),
    monitorList: async () => ({ monitors: await s.monitors.list(caller) }),
    monitorRuns: async (id) => ({ runs: await s.monitors.runs(caller, id) }),
    search: async (body) => s.search.search(caller, await commandOf(SearchRequestDto, body)),
  };
}
