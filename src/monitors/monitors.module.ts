import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { DcacheModule } from '../dcache/dcache.module';
import { ProfilesModule } from '../profiles';
import { MonitorService } from './monitor.service';
import { MonitorTicker } from './monitor-ticker';

@Module({
  imports: [DcacheModule, BatchModule, ProfilesModule],
  providers: [MonitorService, MonitorTicker],
  exports: [MonitorService],
})
export class MonitorsModule {}
