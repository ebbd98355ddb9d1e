import { Module } from '@nestjs/common';
import { JobStreams } from './job-streams';
import { BatchModule } from '../batch/batch.module';
import { DcacheModule } from '../dcache/dcache.module';
import { SearchController } from './search.controller';
import { LlmsTxtController } from './llmstxt.controller';
import { FirecrawlLlmsTxtController } from './firecrawl/firecrawl-llmstxt.controller';
import { FirecrawlParseController } from './firecrawl/firecrawl-parse.controller';
import { BatchController } from './batch.controller';
import { CrawlController } from './crawl.controller';
import { CrawlModule } from '../crawl';
import { PagesModule } from '../pages/pages.module';
import { Admission } from './admission';
import { AuthGuard } from './auth.guard';
import { Authenticator } from './authenticator';
import { FetchController } from './fetch.controller';
import { ParseController } from './parse.controller';
import { FirecrawlController } from './firecrawl/firecrawl.controller';
import { FirecrawlJobsController } from './firecrawl/firecrawl-jobs.controller';
import { FirecrawlTeamController } from './firecrawl/firecrawl-team.controller';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';
import { MetricsAggregates } from './metrics-aggregates';
import { MetricsGuard } from './metrics.guard';
import { RunnerModule } from '../runner/runner.module';
import { ProfilesController } from './profiles.controller';
import { MonitorsController } from './monitors.controller';
import { MonitorsModule } from '../monitors/monitors.module';

@Module({
  imports: [DcacheModule, PagesModule, BatchModule, CrawlModule, RunnerModule, MonitorsModule],
  controllers: [
    HealthController,
    FetchController,
    ParseController,
    BatchController,
    CrawlController,
    MetricsController,
    FirecrawlController,
    FirecrawlJobsController,
    FirecrawlTeamController,
    ProfilesController,
    MonitorsController,
    SearchController,
    LlmsTxtController,
    FirecrawlLlmsTxtController,
    FirecrawlParseController,
  ],
  providers: [JobStreams, Authenticator, AuthGuard, Admission, MetricsAggregates, MetricsGuard],
})
export class ApiModule {}
