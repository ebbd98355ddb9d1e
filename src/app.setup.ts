import { ValidationPipe, type INestApplication, type ValidationError } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { invalidRequest } from './common/errors';
import { ErrorFilter } from './api/error.filter';
import { setupSwagger } from './api/swagger';
import { requestLog } from './api/request-log';

/** The largest JSON body accepted: a 10,000-target batch with long URLs fits. */
export const BODY_LIMIT = '32mb';

function fieldErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => (prefix ? `${prefix}.${m}` : m));
    return [...own, ...fieldErrors(e.children ?? [], path)];
  });
}

/** What main.ts and the tests both apply, so tests run the same app users do. */
export function configureApp<T extends INestApplication>(app: T): T {
  const express = app as unknown as NestExpressApplication;
  express.useBodyParser('json', { limit: BODY_LIMIT });
  // An ETag hashes every response body; fetch results are not conditional-GET resources.
  express.set('etag', false);
  express.disable('x-powered-by');
  express.use(requestLog);
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalPipes(
    new ValidationPipe({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      exceptionFactory: (errors) => {
        const all = fieldErrors(errors);
        const shown = all.slice(0, 10).join('; ') + (all.length > 10 ? `; and ${all.length - 10} more` : '');
        return invalidRequest(
          shown,
          'fix the named fields and send the request again; see /docs for the schema',
        );
      },
    }),
  );
  setupSwagger(app);
  return app;
}
