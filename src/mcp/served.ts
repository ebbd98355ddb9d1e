import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { SIFT_VERSION } from '../common/version';
import { JsonPostTransport } from './json-post';
import { registerTools, type SiftPort } from './tools';

export { servicePort } from './service-port';

/** A server with the tools registered, serving one request at a time with that request's port. */
export interface Served {
  server: McpServer;
  transport: JsonPostTransport;
  port?: SiftPort;
}

/**
 * Builds servers with sift's tools, each connected to a transport of its own. The MCP SDK, its
 * schemas and the tools' are loaded with this file, on the first POST /mcp (mcp-http.ts).
 */
export class ServerMaker {
  /** One JSON-schema validator for every server (each would otherwise compile its own). */
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(private readonly onToolError: (err: unknown) => void) {}

  async build(): Promise<Served> {
    const server = new McpServer(
      { name: 'sift', version: SIFT_VERSION },
      { jsonSchemaValidator: this.validator },
    );
    const served: Served = { server, transport: new JsonPostTransport() };
    registerTools(
      server,
      () => {
        if (!served.port) throw new Error('an MCP server called without a request');
        return served.port;
      },
      this.onToolError,
    );
    await server.connect(served.transport);
    return served;
  }
}
