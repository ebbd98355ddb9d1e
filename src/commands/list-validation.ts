import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { ValidationError } from 'class-validator';
import { TimeSlicer } from '../common/time-slice';
import type { ListPlan } from './compiled-check';

/** Items of a long list the full pipe validates at once: a few milliseconds of work. */
export const LIST_PART = 200;

/** What the full pipe found wrong with one part of the body. */
class PartErrors {
  constructor(readonly errors: ValidationError[]) {}
}

/**
 * The full pipe (class-transformer and class-validator, Nest's ValidationPipe with sift's options)
 * over a body with a long list of nested DTOs, a part of the list at a time with turns of the event
 * loop between them: 10,000 targets at once held the loop for over half a second, which any body
 * the compiled check declines (one bad target among them) cost. Each part is the body with a slice
 * of the list. The answer is the full pipe's: the instance with every part's items, or its errors
 * (the list's children renumbered, its own constraints in the order class-validator runs them, the
 * list's error where class-validator puts it), for the pipe's exception factory. Only for a list
 * whose own rules pass on the whole of it but those applied to each item (ListPlan.wholePasses):
 * those give the same answer on every part as on the whole.
 */
export class ListValidation {
  private readonly full = new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    exceptionFactory: (errors) => new PartErrors(errors),
  });

  constructor(private readonly part = LIST_PART) {}

  async transform(
    body: Record<string, unknown>,
    metadata: ArgumentMetadata,
    list: ListPlan,
  ): Promise<{ entity: object } | { errors: ValidationError[] }> {
    const items = body[list.property] as unknown[];
    const slicer = new TimeSlicer();
    let first: Record<string, unknown> | undefined;
    let rest: ValidationError[] | undefined;
    const entities: unknown[] = [];
    const constraints = new Map<string, string>();
    const children: ValidationError[] = [];
    for (let from = 0; from < items.length; from += this.part) {
      const part = { ...body, [list.property]: items.slice(from, from + this.part) };
      const got = await this.validate(part, metadata);
      if (got instanceof PartErrors) {
        // The body's other properties are the same in every part: their errors are taken once.
        rest ??= got.errors.filter((e) => e.property !== list.property);
        const own = got.errors.find((e) => e.property === list.property);
        for (const [name, message] of Object.entries(own?.constraints ?? {})) constraints.set(name, message);
        for (const child of own?.children ?? []) {
          children.push(Object.assign(child, { property: String(Number(child.property) + from) }));
        }
      } else if (!rest) {
        first ??= got;
        entities.push(...(got[list.property] as unknown[]));
      }
      if (slicer.due()) await slicer.turn();
    }
    if (!rest) return { entity: Object.assign(first!, { [list.property]: entities }) };
    if (constraints.size === 0 && children.length === 0) return { errors: rest };
    const error = Object.assign(new ValidationError(), { property: list.property, children });
    if (constraints.size > 0) {
      const ordered = list.names.filter((n) => constraints.has(n)).map((n) => [n, constraints.get(n)!]);
      error.constraints = Object.fromEntries(ordered);
    }
    // Where class-validator puts it: after the unknown properties, among the others in their order.
    const rank = (e: ValidationError) => list.order.indexOf(e.property);
    const at = rest.findIndex((e) => rank(e) > rank(error));
    return { errors: at < 0 ? [...rest, error] : [...rest.slice(0, at), error, ...rest.slice(at)] };
  }

  /** The full pipe's answer for the whole body at once: the instance, or its errors. */
  async once(
    body: unknown,
    metadata: ArgumentMetadata,
  ): Promise<{ entity: object } | { errors: ValidationError[] }> {
    const got = await this.validate(body, metadata);
    return got instanceof PartErrors ? { errors: got.errors } : { entity: got };
  }

  private async validate(
    part: unknown,
    metadata: ArgumentMetadata,
  ): Promise<Record<string, unknown> | PartErrors> {
    try {
      return (await this.full.transform(part, metadata)) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof PartErrors) return err;
      throw err;
    }
  }
}
