import { Module } from '@nestjs/common';
import { PagesModule } from '../pages/pages.module';
import { MapService } from './map.service';
import { SiteLinks } from './site-links';

/** Whole sites: the links a crawl follows and the map of a site. */
@Module({
  imports: [PagesModule],
  providers: [SiteLinks, MapService],
  exports: [SiteLinks, MapService],
})
export class CrawlModule {}
