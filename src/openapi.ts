import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { openApiDocument } from './api/swagger';

/** `npm run openapi`: writes the OpenAPI document of the built app to openapi.json. */
async function main(): Promise<void> {
  Object.assign(process.env, { SIFT_DB: ':memory:', SIFT_TOKENS: '', SIFT_EXTRACT_WORKERS: '0' });
  const app = await NestFactory.create(AppModule, { logger: false, bodyParser: false });
  const doc = openApiDocument(app);
  await app.close();
  const out = path.resolve(process.argv[2] ?? 'openapi.json');
  fs.writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
