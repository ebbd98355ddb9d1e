import { Global, Module } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppConfig, loadConfig } from './app-config';

/** The validated config and the clock, available everywhere. */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => loadConfig(process.env) }, Clock],
  exports: [AppConfig, Clock],
})
export class ConfigModule {}
