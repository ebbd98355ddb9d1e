import { Module } from '@nestjs/common';
import { DcacheModule } from '../dcache/dcache.module';
import { FetchModule } from '../fetch/fetch.module';
import { AuthGuard } from './auth.guard';
import { FetchController } from './fetch.controller';
import { HealthController } from './health.controller';

@Module({
  imports: [DcacheModule, FetchModule],
  controllers: [HealthController, FetchController],
  providers: [AuthGuard],
})
export class ApiModule {}
