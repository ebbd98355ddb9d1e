import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ErrorFilter } from './api/error.filter';
import { setupSwagger } from './api/swagger';
import { requestLog } from './api/request-log';
import { SiftValidationPipe } from './api/validation.pipe';

/** The largest JSON body accepted: a 10,000-target batch with long URLs fits. */
export const BODY_LIMIT = '32mb';

/** What main.ts and the tests both apply, so tests run the same app users do. */
export function configureApp<T extends INestApplication>(app: T): T {
  const express = app as unknown as NestExpressApplication;
  express.useBodyParser('json', { limit: BODY_LIMIT });
  // An ETag hashes every response body; fetch results are not conditional-GET resources.
  express.set('etag', false);
  express.disable('x-powered-by');
  express.use(requestLog);
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalPipes(new SiftValidationPipe());
  setupSwagger(app);
  return app;
}
