import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import { waitUntil, FLEET_TOKEN, fleet } from '../support/app';
import { Fixture, html, send } from '../support/fixture';
import { kill, startSiftProcess, waitForJobIn, type SiftProcess } from '../support/process';

const committed = path.resolve(__dirname, '..', '..', 'openapi.json');

/*
 * The document as users get it: served by the built server (`nest build` runs the @nestjs/swagger
 * plugin over the DTOs), one process for the whole file.
 */
let sift: SiftProcess;
let dir: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-openapi-'));
  sift = await startSiftProcess({
    SIFT_DB: path.join(dir, 'sift.db'),
    SIFT_TOKENS: `${FLEET_TOKEN}:fleet-caller:fleet`,
    SIFT_FLEET_ALLOW: '127.0.0.0/8',
  });
}, 30_000);
afterAll(async () => {
  if (sift) await kill(sift, 'SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});
const http = () => request(sift.url);

describe('OpenAPI', () => {
  it('serves the document at /docs/openapi.json, equal to the committed openapi.json', async () => {
    const served = (await http().get('/docs/openapi.json')).body;
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
        '/mcp',
        '/metrics',
        '/v1/fetch',
        '/v1/batch',
        '/v1/batch/{id}',
        '/v1/batch/{id}/results',
        '/v1/batch/{id}/events',
        '/v1/batch/{id}/retry',
        '/v1/batch/{id}/deliveries',
        '/v1/batch/{id}/deliveries/redeliver',
        '/v1/crawl',
        '/v1/map',
        '/v1/llmstxt',
        '/v1/llmstxt/{id}',
        '/v1/llmstxt/{id}/llms.txt',
        '/v1/llmstxt/{id}/llms-full.txt',
        '/v1/monitors',
        '/v1/monitors/{id}',
        '/v1/monitors/{id}/pause',
        '/v1/monitors/{id}/resume',
        '/v1/monitors/{id}/runs',
        '/v1/parse',
        '/v1/profiles',
        '/v1/profiles/{name}',
        '/v1/search',
        '/v2/scrape',
        '/v2/batch/scrape',
        '/v2/batch/scrape/{id}',
        '/v2/batch/scrape/{id}/errors',
        '/v2/crawl',
        '/v2/crawl/active',
        '/v2/crawl/ongoing',
        '/v2/crawl/{id}',
        '/v2/crawl/{id}/errors',
        '/v2/map',
        '/v2/concurrency-check',
        '/v2/team/queue-status',
        '/v2/team/credit-usage',
        '/v2/team/token-usage',
        '/v2/team/credit-usage/historical',
        '/v2/team/token-usage/historical',
      ].sort(),
    );
    expect(doc.paths['/v1/fetch'].post.operationId).toBe('fetch');
    // The package's version; /healthz open without a token; /mcp described.
    expect(doc.info.version).toBe(JSON.parse(fs.readFileSync('package.json', 'utf8')).version);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.paths['/v1/fetch'].post.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/mcp'].post.operationId).toBe('mcp');
    expect(doc.paths['/v1/search'].post.operationId).toBe('search');
    expect(doc.paths['/v1/llmstxt'].post.operationId).toBe('submitLlmsTxt');
    expect(Object.keys(doc.paths['/v1/llmstxt/{id}/llms-full.txt'].get.responses['200'].content)).toEqual([
      'text/plain',
    ]);
    expect(doc.paths['/v1/batch'].post.operationId).toBe('submitBatch');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const fetchReq = doc.components.schemas.FetchRequestDto;
    expect(Object.keys(fetchReq.properties)).toEqual(
      expect.arrayContaining(['url', 'format', 'timeout_ms', 'max_bytes', 'max_age_s', 'headers']),
    );
    expect(doc.components.schemas.ErrorBodyDto.properties.code.allOf[0].$ref).toBe(
      '#/components/schemas/ErrorCode',
    );
    expect(doc.components.schemas.ErrorCode.enum).toContain('blocked_address');
    expect(doc.paths['/v1/fetch'].post.responses['502'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorResponseDto',
    );
  });

  it('serves Swagger UI at /docs', async () => {
    const r = await http().get('/docs').redirects(1);
    expect(r.status).toBe(200);
    expect(r.text).toContain('swagger-ui');
    // The API itself still requires a token.
    expect((await http().post('/v1/fetch').send({})).status).toBe(401);
    expect(
      (await http().post('/v1/fetch').set('Authorization', `Bearer ${FLEET_TOKEN}`).send({})).status,
    ).toBe(400);
  });
});

describe('response shapes', () => {
  // The schemas are read from the document the server serves; the bodies from the same server.
  it('every answer carries exactly the properties of its schema, cached and fresh alike', async () => {
    const fx = await new Fixture({ '/page': send(200, 'text/html', html('<p>hello</p>')) }).start();
    try {
      const doc = (await http().get('/docs/openapi.json')).body;
      const props = (name: string) => Object.keys(doc.components.schemas[name].properties).sort();
      const keys = (o: object) => Object.keys(o).sort();

      const fresh = (
        await http()
          .post('/v1/fetch')
          .set(fleet)
          .send({ url: fx.url('/page') })
      ).body;
      const cached = (
        await http()
          .post('/v1/fetch')
          .set(fleet)
          .send({ url: fx.url('/page') })
      ).body;
      expect([fresh.cached, cached.cached]).toEqual([false, true]);
      // links and formats are there only when asked for; render and screenshot only when rendered
      // (test/e2e/render.spec.ts); verdict_hint only for a PDF with no text (documents.spec.ts).
      const whenRendered = ['render', 'screenshot', 'actions'];
      const envelopeProps = props('FetchResponseDto').filter(
        (k) => !['links', 'formats', 'changes', 'verdict_hint', ...whenRendered].includes(k),
      );
      expect(keys(fresh)).toEqual(envelopeProps);
      const linked = (
        await http()
          .post('/v1/fetch')
          .set(fleet)
          .send({
            url: fx.url('/page'),
            format: 'markdown',
            formats: ['text', 'html', 'links', 'changes', 'chunks'],
            tokens: true,
          })
      ).body;
      expect(keys(linked)).toEqual(
        props('FetchResponseDto').filter((k) => ![...whenRendered, 'verdict_hint'].includes(k)),
      );
      expect(keys(linked.formats)).toEqual(['chunks', 'html', 'text']);
      expect(keys(linked.formats.chunks[0])).toEqual(props('ChunkDto'));
      expect(keys(linked.changes)).toEqual(props('ChangesDto'));
      expect(keys(linked.changes.diff)).toEqual(props('ChangesDiffDto'));
      expect(keys(linked.metadata)).toEqual(props('MetadataDto').filter((k) => k !== 'pages' && k !== 'ocr'));
      expect(Object.keys(cached)).toEqual(Object.keys(fresh)); // same fields, same order

      const sub = await http()
        .post('/v1/batch')
        .set(fleet)
        // The second one fails: nothing listens on port 9.
        .send({ targets: [{ url: fx.url('/page') }, { url: 'http://127.0.0.1:9/' }] });
      // seed and limit are a crawl's; depth and duplicate_of its targets'.
      const batchJobProps = props('JobViewDto').filter((k) => !['seed', 'limit', 'monitor_id'].includes(k));
      const batchTargetProps = props('TargetResultDto').filter((k) => !['depth', 'duplicate_of'].includes(k));
      expect(keys(sub.body)).toEqual(batchJobProps);
      await waitForJobIn(sift, sub.body.id, fleet);
      const crawl = await http()
        .post('/v1/crawl')
        .set(fleet)
        .send({ url: fx.url('/page'), limit: 2 });
      expect(keys(crawl.body)).toEqual(props('JobViewDto').filter((k) => k !== 'monitor_id'));
      await waitForJobIn(sift, crawl.body.id, fleet);
      const pages = (await http().get(`/v1/batch/${crawl.body.id}/results`).set(fleet)).body.results;
      for (const r of pages) expect(keys(r)).toEqual(props('TargetResultDto'));
      const map = (
        await http()
          .post('/v1/map')
          .set(fleet)
          .send({ url: fx.url('/page') })
      ).body;
      expect(keys(map)).toEqual(props('MapResponseDto'));
      for (const l of map.links) expect(keys(l)).toEqual(props('MapLinkDto'));
      expect(map.links.length).toBeGreaterThan(0);
      // A webhook nobody answers (a closed port): its deliveries hold an error.
      const hooked = await http()
        .post('/v1/batch')
        .set(fleet)
        .send({
          targets: [{ url: fx.url('/page') }],
          webhook: { url: 'http://127.0.0.1:9/hook', secret: `whsec_${'A'.repeat(32)}` },
        });
      await waitForJobIn(sift, hooked.body.id, fleet);
      await waitUntil(async () => {
        const d = (await http().get(`/v1/batch/${hooked.body.id}/deliveries`).set(fleet)).body;
        return d.deliveries[0]?.last_error ? true : undefined;
      }, 'a failed delivery');
      const results = (await http().get(`/v1/batch/${sub.body.id}/results`).set(fleet)).body.results;
      for (const r of results) expect(keys(r)).toEqual(batchTargetProps);
      expect(keys(results[0].result)).toEqual(envelopeProps);
      expect(keys(results[1].error)).toEqual(props('ErrorBodyDto'));
      const events = (await http().get(`/v1/batch/${sub.body.id}/events`).set(fleet)).body.events;
      for (const e of events) expect(keys(e)).toEqual(props('EventDto'));
      const list = (await http().get('/v1/batch').set(fleet)).body;
      expect(keys(list)).toEqual(props('JobListResponseDto'));
      for (const j of list.jobs)
        expect(keys(j)).toEqual(
          j.kind === 'crawl' ? props('JobViewDto').filter((k) => k !== 'monitor_id') : batchJobProps,
        );
      const retry = await http().post(`/v1/batch/${sub.body.id}/retry`).set(fleet);
      expect(retry.status).toBe(202);
      expect(keys(retry.body)).toEqual(batchJobProps);
      const deliveries = (await http().get(`/v1/batch/${hooked.body.id}/deliveries`).set(fleet)).body;
      expect(keys(deliveries)).toEqual(props('DeliveriesResponseDto'));
      expect(keys(deliveries.webhook)).toEqual(props('WebhookViewDto'));
      expect(deliveries.deliveries.length).toBeGreaterThan(0);
      for (const d of deliveries.deliveries) expect(keys(d)).toEqual(props('DeliveryDto'));
      expect(keys(deliveries.deliveries[0].last_error)).toEqual(props('DeliveryErrorDto'));
      const redeliver = (
        await http().post(`/v1/batch/${hooked.body.id}/deliveries/redeliver`).set(fleet).send({})
      ).body;
      expect(keys(redeliver)).toEqual(props('RedeliverResponseDto'));
      const bad = (await http().post('/v1/fetch').set(fleet).send({})).body;
      expect(keys(bad)).toEqual(props('ErrorResponseDto'));
      expect(keys(bad.error)).toEqual(props('ErrorBodyDto'));
    } finally {
      await fx.stop();
    }
  });
});
