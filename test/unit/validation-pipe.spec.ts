import 'reflect-metadata';
import fc from 'fast-check';
import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { BatchSubmitDto } from '../../src/commands/batch.dto';
import { FetchRequestDto } from '../../src/commands/fetch.dto';
import { ResultsQueryDto } from '../../src/commands/query.dto';
import { compileCheck, SiftValidationPipe } from '../../src/commands/validation.pipe';
import { anyValue, asBody, optionFieldsOf, STRIPPED_KEY, url } from '../support/validation-bodies';

/**
 * The compiled check is only a shortcut: whatever it accepts, the full class-transformer +
 * class-validator pipe must accept too, and build the same instance. Everything it declines goes
 * to the full pipe, so errors are unchanged.
 */
describe('SiftValidationPipe', () => {
  const full = new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true });
  const body: ArgumentMetadata = { type: 'body', metatype: FetchRequestDto };
  const check = compileCheck(FetchRequestDto)!;

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
