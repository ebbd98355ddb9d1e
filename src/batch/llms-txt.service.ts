import { Injectable } from '@nestjs/common';
import { notFound } from '../common/errors';
import { withoutUserinfo } from '../common/urls';
import { BatchReader } from '../dcache';
import {
  llmsFullPage,
  llmsHead,
  llmsSiteOf,
  llmsTxt,
  type LlmsPage,
  type LlmsSite,
} from '../crawl/llms-files';
import type { Caller } from '../pages/caller-policy';
import { BatchService } from './batch.service';
import type { CrawlRequest } from './submission';
import type { JobView } from './views';

/** A result line as the files read it. */
interface ResultLine {
  idx: number;
  url: string;
  result: {
    final_url?: string;
    title?: string | null;
    content?: string;
    metadata?: { description?: string | null };
  } | null;
}

/** Pages whose heads one read takes (their results are read whole by the database). */
const HEADS_PAGE = 200;

/** The results a file is made of: pages read, their verdict ok (not an error page, nor a duplicate). */
const FILTER = { statuses: ['done'] as const, verdict: 'ok' };

/**
 * POST /v1/llmstxt's jobs: a crawl (kind llmstxt) whose pages make the site's llms.txt and
 * llms-full.txt, written from its stored results when asked, so they hold the pages read so far
 * and every page once the job has ended.
 */
@Injectable()
export class LlmsTxtService {
  constructor(
    private readonly batch: BatchService,
    private readonly reader: BatchReader,
  ) {}

  /** `full`: Firecrawl's showFullText, kept with the job for its status answers. */
  submit(
    caller: Caller,
    req: CrawlRequest,
    idemKey?: string,
    full = false,
  ): Promise<{ job: JobView; replayed: boolean }> {
    return this.batch.submitCrawl(caller, req, idemKey, { full });
  }

  /** Whether the job was asked with Firecrawl's showFullText. */
  async askedFull(caller: Caller, id: string): Promise<boolean> {
    return (await this.batch.crawlSpec(caller, id))?.llms_full === true;
  }

  /** The caller's llms.txt job (another caller's, or a job of another kind, is not found). */
  async job(caller: Caller, id: string): Promise<JobView> {
    const job = await this.batch.get(caller, id);
    if (job.kind !== 'llmstxt') throw notFound('llms.txt job');
    return job;
  }

  /** llms.txt, with the job as it stood when its results were read. */
  async llmsTxt(
    caller: Caller,
    id: string,
    stop?: AbortSignal,
  ): Promise<{ job: JobView; text: string; pages: number }> {
    const job = await this.job(caller, id);
    const pages: LlmsPage[] = [];
    let seed: LlmsPage | undefined;
    // What a line shows, read in the database: the results' markdown is not read here.
    for (let after = -1; !stop?.aborted;) {
      const heads = await this.reader.targets.pageHeads(id, after, HEADS_PAGE);
      for (const h of heads) {
        const page = {
          url: withoutUserinfo(h.final_url || h.url),
          title: h.title ?? '',
          description: h.description ?? '',
          markdown: '',
        };
        if (h.idx === 0) seed = page;
        pages.push(page);
      }
      if (heads.length < HEADS_PAGE) break;
      after = heads[heads.length - 1].idx;
    }
    return { job, text: llmsTxt(this.site(job, seed), pages), pages: pages.length };
  }

  /** llms-full.txt, a page at a time: the head, then each page's markdown. */
  async *llmsFull(caller: Caller, id: string, stop?: AbortSignal): AsyncGenerator<string> {
    const job = await this.job(caller, id);
    let head = false;
    for await (const { idx, page } of this.pages(caller, id, stop)) {
      if (!head) {
        head = true;
        yield llmsHead(this.site(job, idx === 0 ? page : undefined));
      }
      yield llmsFullPage(page);
    }
    if (!head) yield llmsHead(this.site(job));
  }

  private site(job: JobView, seed?: LlmsPage): LlmsSite {
    return llmsSiteOf(job.seed ?? seed?.url ?? 'http://unknown', seed);
  }

  /**
   * The job's pages in idx order, read from its results a page of lines at a time, until `stop`
   * (the client hung up).
   */
  private async *pages(
    caller: Caller,
    id: string,
    stop?: AbortSignal,
  ): AsyncGenerator<{ idx: number; page: LlmsPage }> {
    for await (const line of this.batch.resultLines(caller, id, FILTER, { stop })) {
      if (stop?.aborted) return;
      const r = JSON.parse(line) as ResultLine;
      if (!r.result) continue;
      yield {
        idx: r.idx,
        page: {
          url: r.result.final_url || r.url,
          title: r.result.title ?? '',
          description: r.result.metadata?.description ?? '',
          markdown: r.result.content ?? '',
        },
      };
    }
  }
}
