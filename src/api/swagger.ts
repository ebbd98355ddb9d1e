import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { SIFT_VERSION } from '../common/version';

export function openApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('sift')
    .setDescription(
      'A self-hosted web-fetch service: one URL or thousands, back as clean, bounded markdown, text or html. ' +
        'Every error is {"error": {code, message, hint}}.',
    )
    .setVersion(SIFT_VERSION)
    // Tokens are opaque (made by `sift token create`), not JWTs.
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: undefined,
      description: 'a token from `sift token create`',
    })
    .addSecurityRequirements('bearer')
    .addTag(
      'firecrawl',
      "Firecrawl's API, for its clients: the same routes are served under /firecrawl/v2, and under /firecrawl/v1 in v1's shapes (give a client http://host:port/firecrawl as its API URL).",
    )
    .build();
  const doc = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
  });
  // The routes under /firecrawl are those of /v2 again (the firecrawl tag says so): listed once.
  for (const path of Object.keys(doc.paths)) if (path.startsWith('/firecrawl/')) delete doc.paths[path];
  // /healthz answers without a token: the UI shows no lock on it.
  const health = (doc.paths['/healthz'] as { get?: { security?: unknown[] } } | undefined)?.get;
  if (health) health.security = [];
  doc.paths['/mcp'] = MCP_PATH;
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, JsonRpcMessage } };
  return jsonErrors(doc);
}

/** A JSON-RPC 2.0 message: a request (method, id), a notification (method), or an answer (id, result or error). */
const JsonRpcMessage = {
  type: 'object' as const,
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { type: 'string' as const, enum: ['2.0'] },
    id: { oneOf: [{ type: 'string' as const }, { type: 'integer' as const }], nullable: true },
    method: { type: 'string' as const, example: 'tools/call' },
    params: { type: 'object' as const },
    result: { type: 'object' as const },
    error: {
      type: 'object' as const,
      properties: { code: { type: 'integer' as const }, message: { type: 'string' as const } },
    },
  },
};

const rpcError = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/JsonRpcMessage' } } },
});

/**
 * POST /mcp is mounted on express, not a Nest controller: described here by hand, as the MCP
 * Streamable HTTP transport (stateless, JSON answers) defines it.
 */
const MCP_PATH = {
  post: {
    operationId: 'mcp',
    tags: ['mcp'],
    summary:
      "MCP over Streamable HTTP, stateless: JSON-RPC requests (one, or a list of at most 100, each id once) answered in JSON. Tools: fetch, batch_submit, batch_status, batch_results, crawl, map, cancel; each call as the token's caller. GET and DELETE are 405.",
    parameters: [
      {
        name: 'MCP-Protocol-Version',
        in: 'header' as const,
        required: false,
        schema: { type: 'string' as const, example: '2025-06-18' },
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            oneOf: [
              { $ref: '#/components/schemas/JsonRpcMessage' },
              {
                type: 'array' as const,
                maxItems: 100,
                items: { $ref: '#/components/schemas/JsonRpcMessage' },
              },
            ],
          },
        },
      },
    },
    responses: {
      '200': rpcError('The answers: one object for one request, a list for several.'),
      '202': { description: 'Notifications or responses only: nothing to answer.' },
      '400': rpcError('Not JSON-RPC, a repeated id, or an unsupported protocol version.'),
      '401': { description: 'No valid bearer token.' },
      '403': {
        description: 'A foreign Origin, or a Host that is not loopback while sift listens on loopback.',
      },
      '406': rpcError('Accept must list application/json and text/event-stream.'),
      '503': { description: 'Every MCP server busy for 10 s, or sift is stopping (Retry-After).' },
    },
  },
};

/**
 * An error is always the JSON envelope, whatever the route streams when it succeeds: a route's
 * produces (NDJSON, event-stream) are kept for its 2xx answers only.
 */
function jsonErrors(doc: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(
      item as Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>,
    )) {
      for (const [status, res] of Object.entries(op?.responses ?? {})) {
        const body = res.content?.['application/json'] ?? Object.values(res.content ?? {})[0];
        if (Number(status) >= 400 && body) res.content = { 'application/json': body };
      }
    }
  }
  return doc;
}

/** Swagger UI at /docs, the JSON at /docs/openapi.json. */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => openApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    swaggerOptions: { persistAuthorization: true, tryItOutEnabled: true },
  });
}
