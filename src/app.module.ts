import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ApiModule } from './api/api.module';
import { BatchModule } from './batch/batch.module';
import { ConfigModule } from './config/config.module';
import { DcacheModule } from './dcache/dcache.module';
import { RunnerModule } from './runner/runner.module';

@Module({
  imports: [ConfigModule, ScheduleModule.forRoot(), DcacheModule, BatchModule, RunnerModule, ApiModule],
})
export class AppModule {}
