import 'reflect-metadata';
import fc from 'fast-check';
import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { BatchSubmitDto } from '../../src/commands/batch.dto';
import { FetchRequestDto } from '../../src/commands/fetch.dto';
import { ResultsQueryDto } from '../../src/commands/query.dto';
import { compileCheck, SiftValidationPipe } from '../../src/commands/validation.pipe';

/**
 * The compiled check is only a shortcut: whatever it accepts, the full class-transformer +
 * class-validator pipe must accept too, and build the same instance. Everything it declines goes
 * to the full pipe, so errors are unchanged.
 */
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

  it('compiles flat DTOs and declines nested or transformed ones', () => {
    expect(check).not.toBeNull();
    expect(compileCheck(BatchSubmitDto)).toBeNull(); // nested targets, @Type
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
  const field = <T>(good: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: anyValue });
  const url = field(
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
  );
  const bodies = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record(
        {
          url,
          format: field(fc.constantFrom('markdown', 'text', 'html')),
          timeout_ms: field(fc.integer({ min: 0, max: 130000 })),
          max_bytes: field(fc.integer({ min: 0, max: 1e9 })),
          max_age_s: field(fc.integer({ min: -1, max: 1e9 })),
          formats: field(
            fc.uniqueArray(fc.constantFrom('markdown', 'text', 'html', 'links'), { minLength: 1 }),
          ),
          include_selectors: field(fc.array(fc.constantFrom('main', 'p.a', 'article > p'), { maxLength: 3 })),
          headers: field(
            fc.dictionary(
              fc.constantFrom('accept', 'x-a', 'bad header', 'x-b'),
              fc.constantFrom('v', 'a\r\nb', ''),
              { maxKeys: 3 },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ url: fc.constant('http://a.test/'), extra: anyValue }) },
    { weight: 1, arbitrary: anyValue },
    { weight: 1, arbitrary: fc.constantFrom(JSON.parse('{"url":"http://a.test/","__proto__":{"x":1}}'), []) },
  );

  it('accepts only what the full pipe accepts, and builds the same instance', async () => {
    let shortcut = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(bodies, async (value) => {
        const fast = check(asBody(value));
        const slow = await fullPipe(value);
        // Nested values (headers; a "__proto__" key) are left to the full pipe on purpose; lists of
        // primitives (formats, selectors) are not.
        const primitive = (v: unknown) => typeof v !== 'object' || v === null;
        const flat = Object.values(value ?? {}).every(
          (v) => primitive(v) || (Array.isArray(v) && v.every(primitive)),
        );
        if (slow.ok && flat && !JSON.stringify(value).includes('"__proto__"')) accepted++;
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
