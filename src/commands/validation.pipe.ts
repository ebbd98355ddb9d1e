import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { invalidRequest } from '../common/errors';
import { compileCheck, listPlanOf, type Check, type Dto, type ListPlan } from './compiled-check';
import { FLOOD_KEPT, declaredOf, withoutFlood } from './key-flood';
import { LIST_PART, ListValidation } from './list-validation';

export { compileCheck } from './compiled-check';

/**
 * One problem per field: the first rule it broke in the order its DTO declares them (a type
 * first), which class-validator lists last; the note that a list's items are not objects only
 * when nothing else is wrong with it.
 */
function problemOf(constraints: Record<string, string> | undefined): string[] {
  const names = Object.keys(constraints ?? {}).reverse();
  const name = names.find((n) => n !== 'nestedValidation') ?? names[0];
  return name === undefined ? [] : [constraints![name]];
}

function fieldErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = problemOf(e.constraints).map((m) => (prefix ? `${prefix}.${m}` : m));
    return [...own, ...fieldErrors(e.children ?? [], path)];
  });
}

/** 400 invalid_request naming the first ten problems, and how many more (`hidden` of them unseen). */
function refusal(errors: ValidationError[], hidden = 0) {
  const all = fieldErrors(errors);
  const more = all.length + hidden - 10;
  return invalidRequest(
    all.slice(0, 10).join('; ') + (more > 0 ? `; and ${more} more` : ''),
    'fix the named fields and send the request again; see /docs for the schema',
  );
}

/**
 * The app's ValidationPipe (transform, whitelist, unknown fields rejected), answering
 * 400 invalid_request naming the bad fields. A body that passes the DTO's rules compiled (see
 * compileCheck: flat DTOs, and DTOs nesting such, a batch's 10,000 targets checked in slices) is
 * returned without the full pipe; every other body goes through class-transformer and
 * class-validator, with the same answer: a long list of nested DTOs a part at a time (see
 * ListValidation), a flood of undeclared keys as its first few and their count (withoutFlood).
 */
export class SiftValidationPipe extends ValidationPipe {
  private readonly checks = new Map<Dto, Check | null>();
  private readonly lists = new Map<Dto, ListPlan | null>();
  private readonly declared = new Map<Dto, Set<string>>();
  private readonly parts: ListValidation;

  /**
   * `listPart`: items of a long list validated at once when the compiled check declines the body;
   * `floodKept`: undeclared keys of a body given to the full pipe (see withoutFlood).
   */
  constructor(private readonly limits = { listPart: LIST_PART, floodKept: FLOOD_KEPT }) {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      exceptionFactory: (errors) => refusal(errors),
    });
    this.parts = new ListValidation(limits.listPart);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const dto = metadata.type === 'body' ? (metadata.metatype as Dto | undefined) : undefined;
    if (dto) {
      let check = this.checks.get(dto);
      if (check === undefined) this.checks.set(dto, (check = compileCheck(dto)));
      const entity = check ? await check(value) : undefined;
      if (entity) return entity;
      let declared = this.declared.get(dto);
      if (!declared) this.declared.set(dto, (declared = declaredOf(dto)));
      const flood = withoutFlood(value, declared, this.limits.floodKept);
      const body = flood ? flood.body : value;
      const list = this.longList(dto, body);
      if (list || flood) {
        const got = list
          ? await this.parts.transform(body as Record<string, unknown>, metadata, list)
          : await this.parts.once(body, metadata);
        if ('entity' in got) return got.entity;
        throw refusal(got.errors, flood?.hidden);
      }
    }
    return super.transform(value, metadata);
  }

  /**
   * The DTO's list of nested DTOs when the body holds a long one whose own rules pass on the whole
   * of it (see ListValidation): such a body is validated a part at a time.
   */
  private longList(dto: Dto, value: unknown): ListPlan | undefined {
    let list = this.lists.get(dto);
    if (list === undefined) this.lists.set(dto, (list = listPlanOf(dto)));
    if (
      !list ||
      typeof value !== 'object' ||
      value === null ||
      Object.getPrototypeOf(value) !== Object.prototype
    ) {
      return undefined;
    }
    const body = value as Record<string, unknown>;
    const items = body[list.property];
    return Array.isArray(items) && items.length > this.limits.listPart && list.wholePasses(body)
      ? list
      : undefined;
  }
}
