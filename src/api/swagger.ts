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
    .addBearerAuth()
    .addSecurityRequirements('bearer')
    .build();
  return SwaggerModule.createDocument(app, config, { operationIdFactory: (_controller, method) => method });
}

/** Swagger UI at /docs, the JSON at /docs/openapi.json. */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => openApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    swaggerOptions: { persistAuthorization: true, tryItOutEnabled: true },
  });
}
