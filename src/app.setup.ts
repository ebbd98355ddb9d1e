import type { INestApplication } from '@nestjs/common';

/** What main.ts and the tests both apply to the app, so tests run the same app users do. */
export function configureApp(app: INestApplication): INestApplication {
  return app;
}
