import 'reflect-metadata';
import fc from 'fast-check';
import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { BatchSubmitDto, BatchTargetDto, WebhookDto } from '../../src/commands/batch.dto';
import { FetchOptionsDto, FetchRequestDto } from '../../src/commands/fetch.dto';
import { FLOOD_KEPT } from '../../src/commands/key-flood';
import { compileCheck, SiftValidationPipe } from '../../src/commands/validation.pipe';
import {
  anyValue,
  asBody,
  field,
  optionFieldsOf,
  STRIPPED_KEY,
  url,
  urlOf,
} from '../support/validation-bodies';

/**
 * The pipe on a batch: a list of targets, options and a webhook nested. Whatever path a body
 * takes (the compiled check, the list a part at a time, a flood cut to its first keys), the answer
 * is the full class-transformer + class-validator pipe's.
 */
const full = new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true });

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

  it('a long list the shortcut declines, validated in parts: the full pipe’s answer', async () => {
    // Parts of 3 targets against the full pipe over the whole body (no parts at all).
    const inParts = new SiftValidationPipe({ listPart: 3, floodKept: FLOOD_KEPT });
    const whole = new SiftValidationPipe({ listPart: Infinity, floodKept: Infinity });
    const outcome = (p: SiftValidationPipe, value: unknown) =>
      p.transform(asBody(value), batch).then(
        (entity) => ({ entity }),
        (e: Error) => ({ error: e.message }),
      );
    const long = fc.record(
      { targets: fc.array(target, { minLength: 4, maxLength: 12 }), options, on_restart: anyValue },
      { requiredKeys: ['targets'] },
    );
    let errors = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(long, batchBodies), async (value) => {
        const got = await outcome(inParts, value);
        expect(got).toEqual(await outcome(whole, value));
        if ('error' in got) errors++;
      }),
      { numRuns: 1000 },
    );
    expect(errors).toBeGreaterThan(300);
  });

  it('a flood of undeclared keys, or a list for a body: the full pipe’s answer from its first ten', async () => {
    const fewer = new SiftValidationPipe({ listPart: 3, floodKept: 10 });
    const all = new SiftValidationPipe({ listPart: Infinity, floodKept: Infinity });
    const key = fc.oneof(
      fc.constantFrom('targets', 'options', 'ttl_s', 'url', '__proto__', 'constructor', 'prototype'),
      fc.string({ maxLength: 4 }),
      fc.nat({ max: 50 }).map(String),
    );
    const flood = fc.oneof(
      fc.dictionary(key, fc.oneof(anyValue, fc.array(target, { maxLength: 5 })), {
        minKeys: 5,
        maxKeys: 40,
      }),
      fc.array(anyValue, { maxLength: 40 }),
    );
    for (const dto of [BatchSubmitDto, FetchRequestDto]) {
      const meta: ArgumentMetadata = { type: 'body', metatype: dto };
      const outcome = (p: SiftValidationPipe, value: unknown) =>
        p.transform(asBody(value), meta).then(
          (entity) => ({ entity }),
          (e: Error) => ({ error: e.message }),
        );
      await fc.assert(
        fc.asyncProperty(flood, async (value) => {
          expect(await outcome(fewer, value)).toEqual(await outcome(all, value));
        }),
        { numRuns: 500 },
      );
    }
  });

  it('refuses selectors over the budget with the full pipe’s error, from either path', async () => {
    const selectors = (n: number) => Array.from({ length: 20 }, (_, i) => `p.c${n}-${i}-${'a'.repeat(400)}`);
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

  it('takes 10,000 targets in slices, giving timers their turns', async () => {
    const body = {
      targets: Array.from({ length: 10_000 }, (_, i) => ({
        url: `http://a.test/${i}`,
        options: { format: 'text', include_selectors: ['main'], headers: { 'x-a': 'b' } },
      })),
    };
    const parsed = asBody(body);
    let ticks = 0;
    const tick = setInterval(() => ticks++, 1);
    const started = performance.now();
    try {
      const fast = (await nested(parsed)) as BatchSubmitDto | undefined;
      expect(fast?.targets).toHaveLength(10_000);
    } finally {
      clearInterval(tick);
    }
    // In one piece (microtasks only) no timer would run until the end; in slices of 10 ms one
    // runs after each. Counted rather than timed: a loaded machine stretches the slices.
    expect(ticks).toBeGreaterThanOrEqual(Math.floor((performance.now() - started) / 50));
  });
});
