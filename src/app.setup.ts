import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { Express } from 'express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from './config/app-config';
import { Authenticator, type AuthedRequest } from './api/authenticator';
import { mcpBodyBytes, readBody } from './api/body-limit';
import { ErrorFilter } from './api/error.filter';
import { setupSwagger } from './api/swagger';
import { requestLog } from './api/request-log';
import { SiftValidationPipe } from './commands';
import { McpHttp } from './mcp/mcp-http';
import { Admission } from './api/admission';

/** What main.ts and the tests both apply, so tests run the same app users do. */
export function configureApp<T extends INestApplication>(app: T): T {
  const express = app as unknown as NestExpressApplication;
  const config = app.get(AppConfig);
  // A client that sends its headers or its body slowly holds a socket: bound both. Node checks the
  // deadlines on an interval, 30 s unless set before the server listens.
  const server = app.getHttpServer() as Server & { connectionsCheckingInterval: number };
  server.headersTimeout = config.headersTimeoutMs;
  server.requestTimeout = config.requestTimeoutMs;
  server.connectionsCheckingInterval = Math.min(1000, config.headersTimeoutMs);
  // An ETag hashes every response body; fetch results are not conditional-GET resources.
  express.set('etag', false);
  express.disable('x-powered-by');
  express.use(requestLog);
  // MCP over Streamable HTTP: POST only (GET and DELETE answer 405); its fetch and map tools hold
  // the caller's places among fetches in flight, as /v1/fetch and /v1/map do. Its entrance is the
  // API routes' (AuthGuard): the caller first, then a body of at most mcpBodyBytes.
  const admission = app.get(Admission);
  const auth = app.get(Authenticator);
  const mcpLimit = mcpBodyBytes(config.pdfMaxBytes);
  const mcp = app.get(McpHttp).handler((caller) => admission.enter('fetch', caller));
  (express.getHttpAdapter().getInstance() as Express).all('/mcp', (req, res, next) => {
    auth
      .authenticate(req as AuthedRequest)
      .then(() => (req.method === 'POST' ? readBody(req, mcpLimit) : undefined))
      .then(() => mcp(req, res), next);
  });
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalPipes(new SiftValidationPipe());
  setupSwagger(app);
  return app;
}
