import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { DcacheModule } from '../dcache/dcache.module';
import { ClusterSignals } from './cluster-signals';
import { InstanceService } from './instance.service';

/** This process among the instances on one database: its row and heartbeat, recovery, job news. */
@Module({
  imports: [DcacheModule, BatchModule],
  providers: [InstanceService, ClusterSignals],
  exports: [InstanceService],
})
export class ClusterModule {}
