import { Global, Module } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Metrics } from '../common/metrics';
import { AppConfig, loadConfig } from './app-config';

/** The validated config, the clock and the metrics registry, available everywhere. */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => loadConfig(process.env) }, Clock, Metrics],
  exports: [AppConfig, Clock, Metrics],
})
export class ConfigModule {}
