import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { BatchService } from '../../batch/batch.service';
import type { JobView } from '../../batch/views';
import { AppConfig } from '../../config/app-config';
import type { Caller } from '../../pages/caller-policy';
import { AuthGuard } from '../auth.guard';
import { CurrentCaller } from '../caller.decorator';
import { FIRECRAWL_MOUNTS } from './firecrawl-routes';

type Json = Record<string, unknown>;

/**
 * Stands for "no limit" where Firecrawl's usage routes count credits or tokens: sift bills
 * nothing, and Firecrawl's self-hosted edition, without billing, answers the same number.
 */
const UNBILLED = 99_999_999;

/**
 * Firecrawl's team routes, as its self-hosted edition without billing answers them: credits and
 * tokens unlimited, no history; concurrency and the queue from the caller's own live jobs (sift's
 * limit is on live jobs per caller, SIFT_<CLASS>_MAX_LIVE_JOBS).
 */
@ApiTags('firecrawl')
@ApiBearerAuth()
@Controller(FIRECRAWL_MOUNTS)
@UseGuards(AuthGuard)
export class FirecrawlTeamController {
  constructor(
    private readonly batch: BatchService,
    private readonly config: AppConfig,
  ) {}

  /** The caller's live jobs (queued or running) and how many it may have. */
  @Get('concurrency-check')
  async firecrawlConcurrency(@CurrentCaller() caller: Caller): Promise<Json> {
    const live = await this.liveJobs(caller);
    return { success: true, concurrency: live.length, maxConcurrency: this.maxLive(caller) };
  }

  /** The pages the caller's live jobs have still to fetch: those of running jobs active, the rest waiting. */
  @Get('team/queue-status')
  async firecrawlQueueStatus(@CurrentCaller() caller: Caller): Promise<Json> {
    const live = await this.liveJobs(caller);
    const left = (jobs: JobView[]) =>
      jobs.reduce((n, j) => n + Math.max(0, j.targets_total - j.targets_done - j.targets_cancelled), 0);
    const active = left(live.filter((j) => j.status === 'running'));
    const waiting = left(live.filter((j) => j.status !== 'running'));
    return {
      success: true,
      jobsInQueue: active + waiting,
      activeJobsInQueue: active,
      waitingJobsInQueue: waiting,
      maxConcurrency: this.maxLive(caller),
      mostRecentSuccess: null,
    };
  }

  @Get('team/credit-usage')
  firecrawlCreditUsage(): Json {
    return {
      success: true,
      data: {
        remainingCredits: UNBILLED,
        planCredits: UNBILLED,
        billingPeriodStart: null,
        billingPeriodEnd: null,
      },
    };
  }

  @Get('team/token-usage')
  firecrawlTokenUsage(): Json {
    return {
      success: true,
      data: {
        remainingTokens: UNBILLED,
        planTokens: UNBILLED,
        billingPeriodStart: null,
        billingPeriodEnd: null,
      },
    };
  }

  @Get('team/credit-usage/historical')
  firecrawlCreditHistory(): Json {
    return { success: true, periods: [] };
  }

  @Get('team/token-usage/historical')
  firecrawlTokenHistory(): Json {
    return { success: true, periods: [] };
  }

  private maxLive(caller: Caller): number {
    return this.config.limits[caller.callerClass].maxLiveJobs;
  }

  /** The caller's queued and running jobs: at most its live-job limit, read a page at a time. */
  private async liveJobs(caller: Caller): Promise<JobView[]> {
    const jobs: JobView[] = [];
    let after: string | undefined;
    do {
      const page = await this.batch.list(caller, { after, limit: 100, statuses: ['queued', 'running'] });
      jobs.push(...page.jobs);
      after = page.next ?? undefined;
    } while (after && jobs.length < 10_000);
    return jobs;
  }
}
