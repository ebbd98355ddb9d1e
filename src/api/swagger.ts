import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

export function openApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('sift')
    .setDescription(
      'A self-hosted web-fetch service: one URL or thousands, back as clean, bounded markdown, text or html. ' +
        'Every error is {"error": {code, message, hint}}.',
    )
    .setVersion('1')
    // Tokens are opaque (made by `sift token create`), not JWTs.
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: undefined,
      description: 'a token from `sift token create`',
    })
    .addSecurityRequirements('bearer')
    .build();
  const doc = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
  });
  return jsonErrors(doc);
}

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
