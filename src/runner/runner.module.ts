import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { DcacheModule } from '../dcache/dcache.module';
import { FetchModule } from '../fetch/fetch.module';
import { InstanceService } from './instance.service';
import { RunnerService } from './runner.service';
import { SweeperService } from './sweeper.service';
import { WebhookService } from './webhook.service';

@Module({
  imports: [DcacheModule, BatchModule, FetchModule],
  providers: [RunnerService, InstanceService, SweeperService, WebhookService],
  exports: [RunnerService, InstanceService, SweeperService, WebhookService],
})
export class RunnerModule {}
