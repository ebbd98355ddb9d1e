import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { DcacheModule } from '../dcache/dcache.module';
import { FetchModule } from '../fetch/fetch.module';
import { WebhookService } from './webhook.service';

/** The webhook outbox's sender. */
@Module({
  imports: [DcacheModule, BatchModule, FetchModule],
  providers: [WebhookService],
  exports: [WebhookService],
})
export class WebhooksModule {}
