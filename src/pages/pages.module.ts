import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { DcacheModule } from '../dcache/dcache.module';
import { ContentCache } from '../dcache';
import { FetchModule } from '../fetch/fetch.module';
import { Upstream } from '../fetch/upstream';
import { ExtractPool } from '../extract/extract-pool';
import { RenderModule } from '../render/render.module';
import { Renderer } from '../render/renderer';
import { DocumentParser } from '../documents';
import { BrowserStep } from './browser-step';
import { DocumentStep } from './document-step';
import { PageLoader } from './page-loader';
import { ChangeTracker } from './changes';
import { FetchedPages } from './fetched-pages';
import { UploadService } from './upload.service';
import { PageService } from './page.service';
import { ProfilesModule } from '../profiles';

/** The cache keeps content up to the largest class cap. */
const storeCap = (config: AppConfig) =>
  Math.max(config.limits.fleet.outputCap, config.limits.restricted.outputCap);

/** From a URL to an envelope: the page cache, the caller's policy, the fetch, the extraction. */
@Module({
  imports: [DcacheModule, FetchModule, RenderModule, ProfilesModule],
  providers: [
    {
      provide: ExtractPool,
      useFactory: (config: AppConfig) =>
        new ExtractPool({ size: config.extractWorkers, maxQueue: config.extractQueue }),
      inject: [AppConfig],
    },
    // PDFs, in parser processes of their own (see DocumentParser); no more text is gathered than
    // the cache keeps.
    {
      provide: DocumentParser,
      useFactory: (config: AppConfig) =>
        new DocumentParser({
          maxChars: storeCap(config),
          maxCpuMs: config.pdfMaxCpuMs,
          ocrLangs: config.ocrLangs,
        }),
      inject: [AppConfig],
    },
    {
      provide: PageLoader,
      useFactory: (
        upstream: Upstream,
        pool: ExtractPool,
        cache: ContentCache,
        clock: Clock,
        config: AppConfig,
        renderer: Renderer,
        parser: DocumentParser,
      ) =>
        new PageLoader({
          upstream,
          extractor: pool,
          cache,
          clock,
          storeCap: storeCap(config),
          browser: new BrowserStep(renderer),
          documents: new DocumentStep(parser, { maxPages: config.pdfMaxPages, maxMb: config.pdfMaxMb }),
        }),
      inject: [Upstream, ExtractPool, ContentCache, Clock, AppConfig, Renderer, DocumentParser],
    },
    PageService,
    UploadService,
    ChangeTracker,
    FetchedPages,
  ],
  exports: [PageService, UploadService, ChangeTracker, FetchModule, RenderModule, ProfilesModule],
})
export class PagesModule {}
