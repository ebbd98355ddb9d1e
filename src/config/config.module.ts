import { Global, Module } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Metrics } from '../common/metrics';
import { Stopping } from '../common/stopping';
import { AppConfig, loadConfig } from './app-config';

/** The validated config, the clock, the metrics registry and the stop signal, available everywhere. */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => loadConfig(process.env) }, Clock, Metrics, Stopping],
  exports: [AppConfig, Clock, Metrics, Stopping],
})
export class ConfigModule {}
