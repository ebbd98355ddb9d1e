import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ApiModule } from './api/api.module';
import { BatchModule } from './batch/batch.module';
import { ConfigModule } from './config/config.module';
import { DcacheModule } from './dcache/dcache.module';
import { McpModule } from './mcp/mcp.module';
import { RenderModule } from './render/render.module';
import { RunnerModule } from './runner/runner.module';

@Module({
  imports: [
    ConfigModule,
    ScheduleModule.forRoot(),
    DcacheModule,
    RenderModule,
    BatchModule,
    RunnerModule,
    ApiModule,
    McpModule,
  ],
})
export class AppModule {}
