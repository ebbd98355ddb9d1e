// `sift mcp`: the MCP tools over stdio for desktop agent clients, talking to a running sift (at
// SIFT_URL, else SIFT_HOST and PORT as make run reads them) with SIFT_TOKEN. It loads none of the
// server.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { SIFT_VERSION } from '../common/version';
import { httpPort, type RestCall } from '../mcp/http-port';
import { registerTools } from '../mcp/tools';
import { parse } from './args';
import { multipart } from './parse';
import { ApiError, api, call, Unreachable, type Api } from './client';

/** sift's REST API as the tools' port calls it: an error envelope is thrown as the tools answer it. */
export function restCall(a: Api): RestCall {
  return async (method, path, body, file) => {
    try {
      const sent = file
        ? {
            raw: multipart(
              file.name ?? 'file',
              file.bytes,
              body as Record<string, unknown>,
              file.contentType,
            ),
          }
        : { body };
      return await (await call(a, method, path, sent)).json<unknown>();
    } catch (err) {
      if (err instanceof ApiError) throw { code: err.code, message: err.detail, hint: err.hint ?? '' };
      if (err instanceof Unreachable) throw { code: 'internal', message: err.detail, hint: Unreachable.hint };
      throw {
        code: 'internal',
        message: (err as Error).message,
        hint: 'check SIFT_URL and that sift runs',
      };
    }
  };
}

export async function mcpCmd(args: string[]): Promise<void> {
  parse('mcp', args, {}, 0);
  const server = new McpServer({ name: 'sift', version: SIFT_VERSION });
  const port = httpPort(restCall(api()));
  registerTools(server, () => port);
  await server.connect(new StdioServerTransport());
}
