import { Module } from '@nestjs/common';
import { DcacheModule } from '../dcache/dcache.module';
import { ProfilesModule } from '../profiles';
import { BatchService } from './batch.service';
import { JobEvents } from './job-events';
import { JobLifecycle } from './job-lifecycle';
import { JobRecovery } from './job-recovery';
import { JobSignals } from './job-signals';
import { SearchService } from './search.service';
import { LlmsTxtService } from './llms-txt.service';

@Module({
  imports: [DcacheModule, ProfilesModule],
  providers: [BatchService, JobLifecycle, JobRecovery, JobEvents, JobSignals, SearchService, LlmsTxtService],
  exports: [BatchService, JobLifecycle, JobRecovery, JobSignals, SearchService, LlmsTxtService],
})
export class BatchModule {}
