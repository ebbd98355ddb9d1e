import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import { TransformationType } from 'class-transformer';
import { invalidRequest } from '../common/errors';
import { defaultMetadataStorage } from '../tuning/class-transformer';

type Dto = new () => object;
/** A compiled check: the DTO instance when the body is valid, undefined when the full pipe must judge. */
type Check = (body: unknown) => object | undefined;

function fieldErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => (prefix ? `${prefix}.${m}` : m));
    return [...own, ...fieldErrors(e.children ?? [], path)];
  });
}

const isPrimitive = (v: unknown) => typeof v !== 'object' || v === null;

/**
 * Compiles the class-validator rules of a flat DTO into one function that calls the same
 * constraint validators with the same arguments, without class-transformer, error objects or
 * promises. Returns null when the DTO uses anything but synchronous rules on its own properties
 * (nested DTOs, `each`, groups, async constraints) or any class-transformer decorator: those always
 * take the full pipe.
 */
export function compileCheck(dto: Dto): Check | null {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(dto, '', false, false);
  if (metadatas.length === 0) return null;
  type Rule = { validate(value: unknown, args: ValidationArguments): unknown; constraints: unknown[] };
  const props = new Map<string, { optional: ((o: object, v: unknown) => boolean)[]; rules: Rule[] }>();
  for (const m of metadatas) {
    if (m.each || m.always !== undefined || (m.groups && m.groups.length > 0) || m.validateIf) return null;
    let prop = props.get(m.propertyName);
    if (!prop) props.set(m.propertyName, (prop = { optional: [], rules: [] }));
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      prop.optional.push(m.constraints[0] as (o: object, v: unknown) => boolean);
    } else if (m.type === ValidationTypes.CUSTOM_VALIDATION) {
      for (const c of storage.getTargetValidatorConstraints(m.constraintCls)) {
        if (c.async) return null;
        prop.rules.push({ validate: (v, a) => c.instance.validate(v, a), constraints: m.constraints });
      }
    } else {
      return null;
    }
  }
  const transformer = defaultMetadataStorage;
  if (
    transformer.getStrategy(dto) !== 'none' ||
    transformer.getExposedMetadatas(dto).length > 0 ||
    transformer.getExcludedMetadatas(dto).length > 0 ||
    [...props.keys()].some(
      (p) =>
        transformer.findTypeMetadata(dto, p) !== undefined ||
        transformer.findTransformMetadatas(dto, p, TransformationType.PLAIN_TO_CLASS).length > 0,
    )
  ) {
    return null;
  }
  const entries = [...props];
  return (body) => {
    // Only a plain JSON object of declared properties whose values are primitives or lists of
    // primitives (a format list, selectors), which the full pipe would copy unchanged. Anything else
    // (unknown or prototype keys, nested objects, which the full pipe copies and strips) is left to
    // the full pipe, which also names every problem.
    if (typeof body !== 'object' || body === null || Object.getPrototypeOf(body) !== Object.prototype) {
      return undefined;
    }
    for (const [key, value] of Object.entries(body)) {
      if (!props.has(key) || !(isPrimitive(value) || (Array.isArray(value) && value.every(isPrimitive)))) {
        return undefined;
      }
    }
    const entity = Object.assign(new dto(), body) as Record<string, unknown>;
    for (const [property, { optional, rules }] of entries) {
      const value = entity[property];
      if (!optional.every((cond) => cond(entity, value))) continue;
      const args: ValidationArguments = {
        targetName: dto.name,
        property,
        object: entity,
        value,
        constraints: [],
      };
      for (const rule of rules) {
        args.constraints = rule.constraints;
        if (rule.validate(value, args) !== true) return undefined;
      }
    }
    return entity;
  };
}

/**
 * The app's ValidationPipe (transform, whitelist, unknown fields rejected), answering
 * 400 invalid_request naming the bad fields. A body of a flat DTO that passes the DTO's own rules
 * compiled (see compileCheck) is returned without the full pipe; every other body, and every body
 * with an error, goes through class-transformer and class-validator as usual.
 */
export class SiftValidationPipe extends ValidationPipe {
  private readonly checks = new Map<Dto, Check | null>();

  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      exceptionFactory: (errors) => {
        const all = fieldErrors(errors);
        const shown = all.slice(0, 10).join('; ') + (all.length > 10 ? `; and ${all.length - 10} more` : '');
        return invalidRequest(
          shown,
          'fix the named fields and send the request again; see /docs for the schema',
        );
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const dto = metadata.type === 'body' ? (metadata.metatype as Dto | undefined) : undefined;
    if (dto) {
      let check = this.checks.get(dto);
      if (check === undefined) this.checks.set(dto, (check = compileCheck(dto)));
      const entity = check?.(value);
      if (entity) return entity;
    }
    return super.transform(value, metadata);
  }
}
