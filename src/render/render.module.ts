import { Logger, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { FetchModule } from '../fetch/fetch.module';
import { Fetcher } from '../fetch/fetcher';
import { renderGate } from './render-gate';
import { Renderer } from './renderer';

/** Rendering in Chromium (SPEC "Rendering"): the Renderer, its proxy held to the fetcher's address check. */
@Module({
  imports: [FetchModule],
  providers: [
    {
      provide: Renderer,
      useFactory: (config: AppConfig, fetcher: Fetcher) => {
        const log = new Logger('Renderer');
        if (config.chromiumNoSandbox)
          log.warn(
            "SIFT_CHROMIUM_NO_SANDBOX=1: Chromium runs without its sandbox; a page that breaks into a renderer runs with the browser's rights",
          );
        return new Renderer({
          chromiumPath: config.chromiumPath,
          pages: config.renderPages,
          perCaller: {
            fleet: config.limits.fleet.renderConcurrency,
            restricted: config.limits.restricted.renderConcurrency,
          },
          recycleAfter: config.renderRecycleAfter,
          maxMemory: config.renderMaxMemory,
          noSandbox: config.chromiumNoSandbox,
          gate: (callerClass, who) => renderGate(fetcher.addressCheck, callerClass, who),
          log: (m) => log.log(m),
        });
      },
      inject: [AppConfig, Fetcher],
    },
  ],
  exports: [Renderer],
})
export class RenderModule {}
