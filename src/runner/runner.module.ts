import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { DcacheModule } from '../dcache/dcache.module';
import { FetchModule } from '../fetch/fetch.module';
import { RestartService } from './restart.service';
import { RunnerService } from './runner.service';
import { SweeperService } from './sweeper.service';

@Module({
  imports: [DcacheModule, BatchModule, FetchModule],
  providers: [RunnerService, RestartService, SweeperService],
  exports: [RunnerService, RestartService, SweeperService],
})
export class RunnerModule {}
