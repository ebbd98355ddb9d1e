import fc from 'fast-check';
import request from 'supertest';
import type { INestApplication } from '@nestjs/common';
import { createTestApp, FLEET_TOKEN, RESTRICTED_TOKEN } from '../support/app';

/**
 * Property-based bad input over every endpoint's body, query and headers: every answer is a 4xx
 * with the error envelope (or a 2xx/404 where the input happens to be acceptable), never a 5xx,
 * and the process stays healthy. No generated request can reach a network: bodies that would be a
 * valid fetch are corrupted on purpose, and names resolve only through the tests' table.
 */
describe('fuzzing the API', () => {
  let app: INestApplication;
  const auth = (restricted: boolean) => ({
    Authorization: `Bearer ${restricted ? RESTRICTED_TOKEN : FLEET_TOKEN}`,
  });
  const RUNS = 600;

  beforeAll(async () => {
    ({ app } = await createTestApp());
  });
  afterAll(() => app.close());

  function expectEnvelope(r: request.Response, allowed: number[]) {
    if (!allowed.includes(r.status)) throw new Error(`status ${r.status}: ${r.text.slice(0, 300)}`);
    if (r.status >= 400) {
      expect(typeof r.body.error.code).toBe('string');
      expect(typeof r.body.error.message).toBe('string');
      expect(typeof r.body.error.hint).toBe('string');
    }
  }

  // A fetch body that is wrong in at least one place.
  const validOptions = fc.record(
    {
      format: fc.constantFrom('markdown', 'text', 'html'),
      timeout_ms: fc.integer({ min: 1, max: 120000 }),
      max_bytes: fc.integer({ min: 1, max: 1e9 }),
      max_age_s: fc.integer({ min: 0, max: 1e9 }),
    },
    { requiredKeys: [] },
  );
  // JSON has no NaN or Infinity (they would be sent as null, a valid "not given").
  const badValue = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.jsonValue(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
  );
  const badFetchBody = fc
    .tuple(
      validOptions,
      fc.constantFrom('url', 'format', 'timeout_ms', 'max_bytes', 'max_age_s', 'headers', 'extra'),
      badValue,
    )
    .filter(([, key, v]) => !(key === 'url' && typeof v === 'string' && /^https?:/i.test(v)))
    // A header map of strings is valid for a fleet caller: only broken maps are bad input.
    .filter(
      ([, key, v]) =>
        !(
          key === 'headers' &&
          v !== null &&
          typeof v === 'object' &&
          !Array.isArray(v) &&
          Object.entries(v).every(([k, x]) => typeof x === 'string' || k === '__proto__')
        ),
    )
    .map(([opts, key, v]) => ({
      url: 'http://fuzz.invalid/',
      ...opts,
      [key]: v,
      ...(key === 'extra' ? {} : { [`x_${key}`]: undefined }),
    }))
    .filter((b) => {
      // null for an optional field means "not given", as an absent key does.
      const o = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== null)) as Record<
        string,
        unknown
      >;
      if (!('url' in o)) return true;
      // keep only bodies the schema must refuse
      return (
        'extra' in o ||
        typeof o.url !== 'string' ||
        !['markdown', 'text', 'html', undefined].includes(o.format as string) ||
        !(
          o.timeout_ms === undefined ||
          (Number.isInteger(o.timeout_ms) &&
            (o.timeout_ms as number) >= 1 &&
            (o.timeout_ms as number) <= 120000)
        ) ||
        !(o.max_bytes === undefined || (Number.isInteger(o.max_bytes) && (o.max_bytes as number) >= 1)) ||
        !(o.max_age_s === undefined || (Number.isInteger(o.max_age_s) && (o.max_age_s as number) >= 0)) ||
        o.headers !== undefined
      );
    });

  it('POST /v1/fetch: bad bodies are 4xx envelopes', async () => {
    await fc.assert(
      fc.asyncProperty(badFetchBody, fc.boolean(), async (body, restricted) => {
        const r = await request(app.getHttpServer()).post('/v1/fetch').set(auth(restricted)).send(body);
        expectEnvelope(r, [400, 403]);
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /v1/fetch and /v1/batch: arbitrary JSON and raw bytes are 4xx envelopes', async () => {
    const noHttp = fc.jsonValue().filter((v) => !JSON.stringify(v).toLowerCase().includes('http'));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/fetch', '/v1/batch'),
        fc.oneof(noHttp, fc.string()),
        async (path, v) => {
          const r = await request(app.getHttpServer())
            .post(path)
            .set(auth(false))
            .set('Content-Type', 'application/json')
            .send(typeof v === 'string' ? v : JSON.stringify(v));
          expectEnvelope(r, [400]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('POST /v1/batch: bad targets, options, policies and keys are 4xx envelopes', async () => {
    const badTarget = fc.oneof(
      badValue,
      fc.record({ url: badValue.filter((v) => !(typeof v === 'string' && /^https?:/i.test(v))) }),
      fc.record({
        url: fc.constant('http://fuzz.invalid/'),
        options: fc.oneof(
          badValue.filter(
            (v) => v !== null && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0),
          ),
          fc.record({ format: fc.string(), timeout_ms: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
        ),
      }),
    );
    const body = fc.oneof(
      fc.record({ targets: fc.array(badTarget, { minLength: 1, maxLength: 5 }) }),
      fc.record({ targets: badValue }),
      fc.record({
        targets: fc.constant([{ url: 'http://fuzz.invalid/' }]),
        on_restart: fc.string().filter((s) => !['fail', 'retry', 'resume'].includes(s)),
      }),
      fc.record({
        targets: fc.constant([{ url: 'http://fuzz.invalid/' }]),
        idempotency_key: fc.oneof(
          fc.constant(''),
          fc.integer(),
          fc.string({ minLength: 257, maxLength: 300 }),
        ),
      }),
      fc.record({
        targets: fc.constant([{ url: 'http://fuzz.invalid/' }]),
        options: badValue.filter(
          (v) => v !== null && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0),
        ),
      }),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (b, restricted) => {
        const r = await request(app.getHttpServer()).post('/v1/batch').set(auth(restricted)).send(b);
        expectEnvelope(r, [400, 403]);
      }),
      { numRuns: RUNS },
    );
  });

  it('GET endpoints: arbitrary ids, queries and headers never give a 5xx', async () => {
    const id = fc.oneof(fc.uuid(), fc.string({ minLength: 1 }).map(encodeURIComponent));
    const q = fc.dictionary(
      fc.constantFrom('cursor', 'limit', 'after', 'x'),
      fc.oneof(fc.string(), fc.integer().map(String), fc.double().map(String)),
      { maxKeys: 3 },
    );
    // null: the jobs list, which takes the same queries.
    const path = fc.constantFrom(null, '', '/results', '/events');
    await fc.assert(
      fc.asyncProperty(
        id,
        path,
        q,
        fc.option(fc.string()),
        fc.constantFrom('application/json', 'application/x-ndjson', 'text/event-stream', '*/*'),
        async (i, p, query, lastId, accept) => {
          const base = p === null ? '/v1/batch' : `/v1/batch/${i}${p}`;
          let req = request(app.getHttpServer())
            .get(base)
            .query(query)
            .set(auth(false))
            .set('Accept', accept);
          if (lastId !== null) req = req.set('Last-Event-ID', lastId.replace(/[^\x20-\x7e]/g, ''));
          const r = await req;
          expectEnvelope(r, [200, 400, 404]);
        },
      ),
      { numRuns: RUNS },
    );
    const del = await request(app.getHttpServer()).delete('/v1/batch/%E0%A4%A').set(auth(false));
    expect(del.status).toBeLessThan(500);
  });

  it('the process is healthy after all of it', async () => {
    expect((await request(app.getHttpServer()).get('/healthz')).body).toMatchObject({ ok: true });
  });
});
