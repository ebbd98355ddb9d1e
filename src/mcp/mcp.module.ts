import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { CrawlModule } from '../crawl';
import { PagesModule } from '../pages/pages.module';
import { MonitorsModule } from '../monitors/monitors.module';
import { McpHttp } from './mcp-http';

/** The MCP server over Streamable HTTP (mounted at /mcp in app.setup.ts). */
@Module({
  imports: [PagesModule, BatchModule, CrawlModule, MonitorsModule],
  providers: [McpHttp],
  exports: [McpHttp],
})
export class McpModule {}
