import { Module } from '@nestjs/common';
import { DcacheModule } from '../dcache/dcache.module';
import { BatchService } from './batch.service';
import { JobSignals } from './job-signals';

@Module({
  imports: [DcacheModule],
  providers: [BatchService, JobSignals],
  exports: [BatchService, JobSignals],
})
export class BatchModule {}
