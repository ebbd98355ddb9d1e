import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { createTestApp, FLEET_TOKEN } from '../support/app';

const committed = path.resolve(__dirname, '..', '..', 'openapi.json');

describe('OpenAPI', () => {
  it('serves the document at /docs/openapi.json, equal to the committed openapi.json', async () => {
    const { app } = await createTestApp();
    const served = (await request(app.getHttpServer()).get('/docs/openapi.json')).body;
    await app.close();
    const onDisk = JSON.parse(fs.readFileSync(committed, 'utf8'));
    // A difference means openapi.json is stale: run `npm run openapi` and commit it.
    expect(served).toEqual(onDisk);
  });

  it('is a valid OpenAPI 3 document with every endpoint, bearer auth and operationIds from method names', async () => {
    const SwaggerParser = require('@apidevtools/swagger-parser');
    const doc = JSON.parse(fs.readFileSync(committed, 'utf8'));
    await SwaggerParser.validate(structuredClone(doc));
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/healthz',
        '/metrics',
        '/v1/fetch',
        '/v1/batch',
        '/v1/batch/{id}',
        '/v1/batch/{id}/results',
        '/v1/batch/{id}/events',
      ].sort(),
    );
    expect(doc.paths['/v1/fetch'].post.operationId).toBe('fetch');
    expect(doc.paths['/v1/batch'].post.operationId).toBe('submitBatch');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const fetchReq = doc.components.schemas.FetchRequestDto;
    expect(Object.keys(fetchReq.properties)).toEqual(
      expect.arrayContaining(['url', 'format', 'timeout_ms', 'max_bytes', 'max_age_s', 'headers']),
    );
    expect(doc.components.schemas.ErrorBodyDto.properties.code.enum).toContain('blocked_address');
    expect(doc.paths['/v1/fetch'].post.responses['502'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorResponseDto',
    );
  });

  it('serves Swagger UI at /docs', async () => {
    const { app } = await createTestApp();
    const r = await request(app.getHttpServer()).get('/docs').redirects(1);
    expect(r.status).toBe(200);
    expect(r.text).toContain('swagger-ui');
    // The API itself still requires a token.
    expect((await request(app.getHttpServer()).post('/v1/fetch').send({})).status).toBe(401);
    expect(
      (
        await request(app.getHttpServer())
          .post('/v1/fetch')
          .set('Authorization', `Bearer ${FLEET_TOKEN}`)
          .send({})
      ).status,
    ).toBe(400);
    await app.close();
  });
});
