import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { CrawlModule } from '../crawl';
import { ClusterModule } from '../cluster/cluster.module';
import { DcacheModule } from '../dcache/dcache.module';
import { PagesModule } from '../pages/pages.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { RunnerService } from './runner.service';
import { SweeperService } from './sweeper.service';

@Module({
  imports: [DcacheModule, BatchModule, PagesModule, CrawlModule, WebhooksModule, ClusterModule],
  providers: [RunnerService, SweeperService],
  exports: [RunnerService, SweeperService, WebhooksModule, ClusterModule],
})
export class RunnerModule {}
