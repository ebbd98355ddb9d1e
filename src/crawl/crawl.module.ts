import { Module, type OnModuleInit } from '@nestjs/common';
import { PagesModule } from '../pages/pages.module';
import { MapService } from './map.service';
import { warmScopes } from './scope';
import { SiteLinks } from './site-links';

/** Whole sites: the links a crawl follows and the map of a site. */
@Module({
  imports: [PagesModule],
  providers: [SiteLinks, MapService],
  exports: [SiteLinks, MapService],
})
export class CrawlModule implements OnModuleInit {
  onModuleInit(): void {
    warmScopes();
  }
}
