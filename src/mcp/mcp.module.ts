import { Module } from '@nestjs/common';
import { BatchModule } from '../batch/batch.module';
import { CrawlModule } from '../crawl';
import { PagesModule } from '../pages/pages.module';
import { McpHttp } from './mcp-http';

/** The MCP server over Streamable HTTP (mounted at /mcp in app.setup.ts). */
@Module({
  imports: [PagesModule, BatchModule, CrawlModule],
  providers: [McpHttp],
  exports: [McpHttp],
})
export class McpModule {}
