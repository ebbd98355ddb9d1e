import { Module } from '@nestjs/common';
import { DcacheModule } from '../dcache/dcache.module';
import { BatchService } from './batch.service';
import { ClusterSignals } from './cluster-signals';
import { JobLifecycle } from './job-lifecycle';
import { JobSignals } from './job-signals';

@Module({
  imports: [DcacheModule],
  providers: [BatchService, JobLifecycle, JobSignals, ClusterSignals],
  exports: [BatchService, JobLifecycle, JobSignals],
})
export class BatchModule {}
