import 'reflect-metadata';
import fc from 'fast-check';
import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { BatchSubmitDto, BatchTargetDto, WebhookDto } from '../../src/commands/batch.dto';
import { FetchOptionsDto, FetchRequestDto } from '../../src/commands/fetch.dto';
import { ResultsQueryDto } from '../../src/commands/query.dto';
import { compileCheck, SiftValidationPipe } from '../../src/commands/validation.pipe';

/**
 * The compiled check is only a shortcut: whatever it accepts, the full class-transformer +
 * class-validator pipe must accept too, and build the same instance. Everything it declines goes
 * to the full pipe, so errors are unchanged.
 */
/** A key Nest's pipe deletes from every object before class-transformer sees it. */
const STRIPPED_KEY = /"(__proto__|prototype|constructor)"/;

describe('SiftValidationPipe', () => {
  const full = new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true });
  const body: ArgumentMetadata = { type: 'body', metatype: FetchRequestDto };
  const check = compileCheck(FetchRequestDto)!;

  /** What body-parser hands the pipe: a fresh JSON.parse of the value. */
  const asBody = (value: unknown): unknown => {
    const json = JSON.stringify(value);
    return json === undefined ? undefined : JSON.parse(json);
  };

  async function fullPipe(value: unknown): Promise<{ ok: true; entity: unknown } | { ok: false }> {
    try {
      return { ok: true, entity: await full.transform(asBody(value), body) };
    } catch {
      return { ok: false };
    }
  }

  it('compiles flat DTOs and those nesting them, and declines transformed ones', () => {
    expect(check).not.toBeNull();
    expect(compileCheck(BatchSubmitDto)).not.toBeNull(); // targets, options, webhook: @Type + @ValidateNested
    expect(compileCheck(ResultsQueryDto)).toBeNull(); // @Type(() => Number)
  });

  const anyValue = fc.oneof(
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.integer({ min: -5, max: 200000 }),
    fc.double(),
    fc.string({ maxLength: 12 }),
    fc.constantFrom('markdown', 'text', 'html', 'pdf', 'http://a.test/', 'ftp://a.test/', '5'),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
  );
  /** Mostly `good`, and one time in `odds` anything at all. */
  const field = <T>(good: fc.Arbitrary<T>, odds = 7) =>
    fc.oneof({ weight: odds - 1, arbitrary: good }, { weight: 1, arbitrary: anyValue });
  const urlOf = (odds?: number) =>
    field(
      fc.oneof(
        fc.webUrl(),
        fc.constantFrom(
          'http://127.0.0.1:8080/x',
          'https://ex.test/a?b=c',
          'http://',
          'file:///etc/passwd',
          ' ',
        ),
      ),
      odds,
    );
  const url = urlOf();
  /** A fetch's options, valid most of the time: a /v1/fetch body without its url, a target's options. */
  const optionFieldsOf = (odds?: number) => ({
    format: field(fc.constantFrom('markdown', 'text', 'html'), odds),
    timeout_ms: field(fc.integer({ min: 0, max: 130000 }), odds),
    max_bytes: field(fc.integer({ min: 0, max: 1e9 }), odds),
    max_age_s: field(fc.integer({ min: -1, max: 1e9 }), odds),
    formats: field(
      fc.uniqueArray(fc.constantFrom('markdown', 'text', 'html', 'links'), { minLength: 1 }),
      odds,
    ),
    include_selectors: field(fc.array(fc.constantFrom('main', 'p.a', 'article > p'), { maxLength: 3 }), odds),
    headers: field(
      fc.dictionary(
        fc.oneof(
          { weight: 9, arbitrary: fc.constantFrom('accept', 'x-a', 'x-b') },
          { weight: 1, arbitrary: fc.constantFrom('bad header', 'constructor') },
        ),
        fc.oneof(
          { weight: 9, arbitrary: fc.constantFrom('v', '') },
          { weight: 1, arbitrary: fc.constant('a\r\nb') },
        ),
        { maxKeys: 3 },
      ),
      odds,
    ),
  });
  const optionFields = optionFieldsOf();
  const bodies = fc.oneof(
    { weight: 8, arbitrary: fc.record({ url, ...optionFields }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.record({ url: fc.constant('http://a.test/'), extra: anyValue }) },
    { weight: 1, arbitrary: anyValue },
    { weight: 1, arbitrary: fc.constantFrom(JSON.parse('{"url":"http://a.test/","__proto__":{"x":1}}'), []) },
  );

  it('accepts only what the full pipe accepts, and builds the same instance', async () => {
    let shortcut = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(bodies, async (value) => {
        const fast = await check(asBody(value));
        const slow = await fullPipe(value);
        // Values the full pipe copies as they are (primitives, lists of them, header maps) take the
        // shortcut; deeper values and the keys the full pipe strips ("__proto__") are left to it.
        const primitive = (v: unknown) => typeof v !== 'object' || v === null;
        const simple = (v: unknown) =>
          primitive(v) ||
          (Array.isArray(v) ? v.every(primitive) : Object.values(v as object).every(primitive));
        const flat = Object.values(value ?? {}).every(simple);
        if (slow.ok && flat && !STRIPPED_KEY.test(JSON.stringify(value) ?? '')) accepted++;
        if (fast === undefined) return;
        shortcut++;
        expect(slow.ok).toBe(true);
        expect(fast).toBeInstanceOf(FetchRequestDto);
        expect(fast).toEqual((slow as { entity: unknown }).entity);
      }),
      { numRuns: 1500 },
    );
    // The generator reaches both sides, and the shortcut takes every valid flat body.
    expect(accepted).toBeGreaterThan(30);
    expect(shortcut).toBe(accepted);
  });

  describe('a batch: targets, options and a webhook nested', () => {
    const batch: ArgumentMetadata = { type: 'body', metatype: BatchSubmitDto };
    const nested = compileCheck(BatchSubmitDto)!;
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    // Bodies hold many fields: each is odd more rarely than in a flat body, so that many are valid.
    const ODDS = 60;
    const options = field(fc.record(optionFieldsOf(ODDS), { requiredKeys: [] }), ODDS);
    const target = fc.oneof(
      { weight: 30, arbitrary: fc.record({ url: urlOf(ODDS), options }, { requiredKeys: ['url'] }) },
      { weight: 1, arbitrary: fc.record({ url, extra: anyValue }) },
      { weight: 1, arbitrary: anyValue },
    );
    const batchBodies = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record(
          {
            targets: field(fc.array(target, { minLength: 1, maxLength: 4 }), ODDS),
            options,
            on_restart: field(fc.constantFrom('fail', 'retry', 'resume'), ODDS),
            webhook: fc.oneof(
              fc.record(
                {
                  url,
                  secret: fc.constantFrom(secret, 'whsec_x'),
                  events: field(
                    fc.array(fc.constantFrom('batch.done', 'target.done', 'nope'), { maxLength: 2 }),
                  ),
                },
                { requiredKeys: ['url', 'secret'] },
              ),
            ),
            ttl_s: field(fc.integer({ min: 60, max: 1e6 }), ODDS),
            idempotency_key: field(fc.string({ minLength: 1, maxLength: 4 }), ODDS),
            ignore_invalid_urls: field(fc.boolean(), ODDS),
          },
          { requiredKeys: ['targets'] },
        ),
      },
      { weight: 1, arbitrary: anyValue },
    );

    async function fullBatch(
      value: unknown,
    ): Promise<{ ok: true; entity: unknown } | { ok: false; error: unknown }> {
      try {
        return { ok: true, entity: await full.transform(asBody(value), batch) };
      } catch (error) {
        return { ok: false, error };
      }
    }

    it('accepts only what the full pipe accepts, and builds the same instances', async () => {
      let shortcut = 0;
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(batchBodies, async (value) => {
          const fast = await nested(asBody(value));
          const slow = await fullBatch(value);
          // Every valid body takes the shortcut but those holding a key the full pipe strips.
          if (slow.ok && !STRIPPED_KEY.test(JSON.stringify(value) ?? '')) accepted++;
          if (fast === undefined) return;
          shortcut++;
          expect(slow.ok).toBe(true);
          const entity = (slow as { entity: BatchSubmitDto }).entity;
          expect(fast).toEqual(entity);
          const got = fast as BatchSubmitDto;
          expect(got).toBeInstanceOf(BatchSubmitDto);
          for (const t of got.targets) {
            expect(t).toBeInstanceOf(BatchTargetDto);
            if (t.options) expect(t.options).toBeInstanceOf(FetchOptionsDto);
          }
          if (got.options) expect(got.options).toBeInstanceOf(FetchOptionsDto);
          if (got.webhook) expect(got.webhook).toBeInstanceOf(WebhookDto);
        }),
        { numRuns: 1500 },
      );
      expect(accepted).toBeGreaterThan(50);
      expect(shortcut).toBe(accepted);
    });

    it('refuses selectors over the budget with the full pipe’s error, from either path', async () => {
      const selectors = (n: number) =>
        Array.from({ length: 20 }, (_, i) => `p.c${n}-${i}-${'a'.repeat(400)}`);
      const body = {
        targets: Array.from({ length: 5 }, (_, n) => ({
          url: 'http://a.test/',
          options: { include_selectors: selectors(n) },
        })),
      };
      const slow = await fullBatch(body);
      expect(slow.ok).toBe(false);
      const thrown = await nested(asBody(body)).catch((e: unknown) => e);
      expect(thrown).toEqual((slow as { error: unknown }).error);
      expect(thrown).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('over 20000'),
      });
    });

    it('takes 10,000 targets in slices, never holding the thread much longer than one', async () => {
      const body = {
        targets: Array.from({ length: 10_000 }, (_, i) => ({
          url: `http://a.test/${i}`,
          options: { format: 'text', include_selectors: ['main'], headers: { 'x-a': 'b' } },
        })),
      };
      const parsed = asBody(body);
      let longest = 0;
      let last = performance.now();
      const tick = setInterval(() => {
        longest = Math.max(longest, performance.now() - last);
        last = performance.now();
      }, 1);
      try {
        const fast = (await nested(parsed)) as BatchSubmitDto | undefined;
        expect(fast?.targets).toHaveLength(10_000);
      } finally {
        clearInterval(tick);
      }
      // A slice is 10 ms; the bound leaves room for a collection and a loaded machine.
      expect(longest).toBeLessThan(40);
    });
  });

  it('answers a bad body with the full pipe’s error, naming the field', async () => {
    const pipe = new SiftValidationPipe();
    await expect(pipe.transform({ url: 'ftp://x.test/' }, body)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('url must be an absolute http or https URL'),
    });
    await expect(pipe.transform({ url: 'http://x.test/', extra: 1 }, body)).rejects.toMatchObject({
      message: expect.stringContaining('property extra should not exist'),
    });
    const ok = await pipe.transform({ url: 'http://x.test/', format: 'text' }, body);
    expect(ok).toBeInstanceOf(FetchRequestDto);
    expect(ok).toMatchObject({ url: 'http://x.test/', format: 'text' });
  });
});
