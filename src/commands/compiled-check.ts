import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import { TransformationType } from 'class-transformer';
import { TimeSlicer } from '../common/time-slice';
import { defaultMetadataStorage } from '../tuning/class-transformer';

export type Dto = new () => object;
/** A compiled check: the DTO instance when the body is valid, undefined when the full pipe must judge. */
export type Check = (body: unknown) => Promise<object | undefined>;

type Condition = (o: object, v: unknown) => boolean;
interface Rule {
  /** The constraint's name: the key of its message in a ValidationError. */
  name: string;
  validate(value: unknown, args: ValidationArguments): unknown;
  constraints: unknown[];
  /** Applied to each item of a list, as class-validator's `each`. */
  each: boolean;
}
interface Prop {
  optional: Condition[];
  rules: Rule[];
  /** `@ValidateNested()` with `@Type(() => Dto)`: one instance, or (each) a list of them. */
  nested?: { each: boolean; plan: Plan };
}
interface Plan {
  dto: Dto;
  props: Map<string, Prop>;
}

const isPrimitive = (v: unknown) => typeof v !== 'object' || v === null;
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
/** The keys the full pipe deletes from every object it is given (Nest's stripProtoKeys). */
const STRIPPED = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * A value class-transformer copies unchanged (or as an equal copy) and the full pipe does not strip:
 * a primitive, a list of primitives (a format list, selectors), or a flat object of primitives
 * without the keys the pipe deletes (a header map).
 */
function isSimple(v: unknown): boolean {
  if (isPrimitive(v)) return true;
  if (Array.isArray(v)) return v.every(isPrimitive);
  if (!isPlainObject(v)) return false;
  for (const key in v) if (STRIPPED.has(key) || !isPrimitive(v[key])) return false;
  return true;
}

/** Whether class-transformer would do more to the DTO than copy its properties (and build `nested`). */
function transformsMore(dto: Dto, props: Map<string, Prop>): boolean {
  const t = defaultMetadataStorage;
  if (t.getStrategy(dto) !== 'none' || t.getExposedMetadatas(dto).length > 0) return true;
  if (t.getExcludedMetadatas(dto).length > 0) return true;
  for (const [p, prop] of props) {
    if (t.findTransformMetadatas(dto, p, TransformationType.PLAIN_TO_CLASS).length > 0) return true;
    if ((t.findTypeMetadata(dto, p) !== undefined) !== (prop.nested !== undefined)) return true;
  }
  return false;
}

/** The class `@Type` names for a nested property, when it is a plain one (no discriminator). */
function nestedClass(dto: Dto, property: string): Dto | undefined {
  const type = defaultMetadataStorage.findTypeMetadata(dto, property);
  if (!type?.typeFunction || type.options?.discriminator) return undefined;
  const cls = (type.typeFunction as () => unknown)();
  return typeof cls === 'function' ? (cls as Dto) : undefined;
}

/**
 * The DTO's rules as a plan the check runs: synchronous custom rules (with or without `each`),
 * conditions (IsOptional), and nested DTOs that compile the same way. Null for anything else
 * (groups, `always`, async constraints, discriminators, transforms, a DTO nested in itself).
 */
function planOf(dto: Dto, within: Set<Dto>): Plan | null {
  if (within.has(dto)) return null;
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(dto, '', false, false);
  if (metadatas.length === 0) return null;
  const props = new Map<string, Prop>();
  for (const m of metadatas) {
    if (m.always !== undefined || (m.groups && m.groups.length > 0) || m.validateIf) return null;
    let prop = props.get(m.propertyName);
    if (!prop) props.set(m.propertyName, (prop = { optional: [], rules: [] }));
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION && !m.each) {
      prop.optional.push(m.constraints[0] as Condition);
    } else if (m.type === ValidationTypes.CUSTOM_VALIDATION) {
      for (const c of storage.getTargetValidatorConstraints(m.constraintCls)) {
        if (c.async) return null;
        prop.rules.push({
          name: c.name,
          validate: (v, a) => c.instance.validate(v, a),
          constraints: m.constraints,
          each: m.each === true,
        });
      }
    } else if (m.type === ValidationTypes.NESTED_VALIDATION && !prop.nested) {
      const cls = nestedClass(dto, m.propertyName);
      const plan = cls && planOf(cls, new Set([...within, dto]));
      if (!plan) return null;
      prop.nested = { each: m.each === true, plan };
    } else {
      return null;
    }
  }
  return transformsMore(dto, props) ? null : { dto, props };
}

/** Long lists of nested DTOs are built and checked in slices (SPEC "The main thread stays free"). */
const turn = (slicer: TimeSlicer) => (slicer.due() ? slicer.turn() : undefined);

/**
 * The instance class-transformer builds from `value`, for the shapes whose copy is plain: a plain
 * object of declared properties holding simple values, or the nested DTOs (one, or a list) the
 * plan names. Undefined for anything else, which the full pipe copies, strips and judges.
 */
async function build(plan: Plan, value: unknown, slicer: TimeSlicer): Promise<object | undefined> {
  if (!isPlainObject(value)) return undefined;
  const entity = new plan.dto() as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    const prop = plan.props.get(key);
    if (!prop) return undefined;
    const v = value[key];
    if (!prop.nested || v === undefined || v === null) {
      if (!isSimple(v)) return undefined;
      entity[key] = v;
    } else if (prop.nested.each) {
      if (!Array.isArray(v)) return undefined;
      const items: object[] = new Array<object>(v.length);
      for (let i = 0; i < v.length; i++) {
        const item = await build(prop.nested.plan, v[i], slicer);
        if (!item) return undefined;
        items[i] = item;
        await turn(slicer);
      }
      entity[key] = items;
    } else {
      const item = await build(prop.nested.plan, v, slicer);
      if (!item) return undefined;
      entity[key] = item;
    }
  }
  return entity;
}

/**
 * Whether the instance passes every rule, run as class-validator runs them: property by property,
 * a property's own rules (with the same arguments) before what it nests, so a rule that prepares
 * for the nested ones (SelectorBudget) runs first. A rule that throws ends the check, as it ends
 * the full pipe.
 */
async function passes(plan: Plan, entity: object, slicer: TimeSlicer): Promise<boolean> {
  const object = entity as Record<string, unknown>;
  for (const [property, { optional, rules, nested }] of plan.props) {
    const value = object[property];
    if (!optional.every((cond) => cond(entity, value))) continue;
    const args: ValidationArguments = { targetName: plan.dto.name, property, object, value, constraints: [] };
    for (const rule of rules) {
      args.constraints = rule.constraints;
      const ok =
        rule.each && Array.isArray(value)
          ? value.every((item) => rule.validate(item, args) === true)
          : rule.validate(value, args) === true;
      if (!ok) return false;
    }
    if (!nested || value === undefined) continue;
    if (!Array.isArray(value)) {
      if (typeof value !== 'object' || value === null || !(await passes(nested.plan, value, slicer)))
        return false;
      continue;
    }
    for (const item of value as unknown[]) {
      if (typeof item !== 'object' || item === null || !(await passes(nested.plan, item, slicer)))
        return false;
      await turn(slicer);
    }
  }
  return true;
}

/**
 * Compiles the class-validator rules of a DTO, and of the DTOs it nests, into a check that calls
 * the same constraint validators with the same arguments, without class-transformer, error objects
 * or class-validator's promises, a slice at a time over long lists. Null when the DTO uses anything
 * the plan does not take (see planOf): such a DTO always takes the full pipe.
 */
export function compileCheck(dto: Dto): Check | null {
  const plan = planOf(dto, new Set());
  if (!plan) return null;
  return async (body) => {
    const slicer = new TimeSlicer();
    const entity = await build(plan, body, slicer);
    return entity && (await passes(plan, entity, slicer)) ? entity : undefined;
  };
}

/** A DTO's list of nested DTOs (a batch's targets), as the pipe validates a long one in parts. */
export interface ListPlan {
  property: string;
  /** The DTO's properties in the order class-validator reports their errors. */
  order: string[];
  /** The names of the list's own constraints, in the order class-validator runs them. */
  names: string[];
  /**
   * Whether the whole list passes its own rules but those applied to each item (a part of it
   * passes them too, then); a rule may throw, as in the full pipe (SelectorBudget).
   */
  wholePasses(body: Record<string, unknown>): boolean;
}

/** The DTO's one list of nested DTOs, when the DTO compiles (see planOf); null otherwise. */
export function listPlanOf(dto: Dto): ListPlan | null {
  const plan = planOf(dto, new Set());
  const lists = plan ? [...plan.props].filter(([, p]) => p.nested?.each) : [];
  if (!plan || lists.length !== 1) return null;
  const [property, { rules }] = lists[0];
  return {
    property,
    order: [...plan.props.keys()],
    names: rules.map((r) => r.name),
    wholePasses(body) {
      const value = body[property];
      const args: ValidationArguments = {
        targetName: dto.name,
        property,
        object: body,
        value,
        constraints: [],
      };
      return rules.every((rule) => {
        args.constraints = rule.constraints;
        return rule.each || rule.validate(value, args) === true;
      });
    },
  };
}
