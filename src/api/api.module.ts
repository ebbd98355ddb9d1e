import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { DcacheModule } from '../dcache/dcache.module';
import { BatchController } from './batch.controller';
import { FetchModule } from '../fetch/fetch.module';
import { AuthGuard } from './auth.guard';
import { FetchController } from './fetch.controller';
import { HealthController } from './health.controller';

@Module({
  imports: [DcacheModule, FetchModule, BatchModule],
  controllers: [HealthController, FetchController, BatchController],
  providers: [AuthGuard],
})
export class ApiModule {}
