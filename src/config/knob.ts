import { IsInt, IsString, Max, Min, validateSync, type ValidationError } from 'class-validator';
import { ConfigError } from './parsers';

/** One environment variable: its default, its rules, its meaning, and what AppConfig holds of it. */
export interface Knob<T = unknown> {
  readonly env: string;
  /** The value when the variable is unset or empty; undefined: none. */
  readonly default: string | undefined;
  /** One line, for .env.example and docs/configuration.md. */
  readonly doc: string;
  /** The class-validator decorators its value must pass, in the order written above a property. */
  readonly rules: readonly PropertyDecorator[];
  /** Read as a number before it is validated. */
  readonly numeric: boolean;
  /** The validated value as AppConfig holds it; may throw ConfigError naming the variable. */
  readonly read: (value: any) => T;
  /** How the docs show the default when its value depends on the build (`sift/<version>`). */
  readonly shown?: string;
  /** A byte count: docs/configuration.md shows it in KiB, MiB or GiB. */
  readonly bytes?: boolean;
  /** What .env.example sets instead of the default (commented out when the knob has no default). */
  readonly example?: { value: string; note?: string };
}

interface Common {
  env: string;
  shown?: string;
  example?: { value: string; note?: string };
}

interface IntOptions extends Common {
  default: number;
  min: number;
  max?: number;
  bytes?: boolean;
}

/** A whole number within [min, max]; `doc` is its one line of meaning. */
export function int(o: IntOptions, doc: string): Knob<number>;
export function int<T>(o: IntOptions & { read: (value: number) => T }, doc: string): Knob<T>;
export function int(o: IntOptions & { read?: (value: number) => unknown }, doc: string): Knob {
  const rules = [IsInt(), Min(o.min), ...(o.max === undefined ? [] : [Max(o.max)])];
  const { env, shown, example, bytes } = o;
  return {
    env,
    shown,
    example,
    bytes,
    doc,
    default: String(o.default),
    rules,
    numeric: true,
    read: o.read ?? ((v: number) => v),
  };
}

interface TextOptions extends Common {
  default: string | undefined;
  rules?: PropertyDecorator[];
}

/** A string, by default any string; `doc` is its one line of meaning. */
export function text(o: TextOptions, doc: string): Knob<string>;
export function text<T>(o: TextOptions & { read: (value: string) => T }, doc: string): Knob<T>;
export function text(o: TextOptions & { read?: (value: string) => unknown }, doc: string): Knob {
  const { env, shown, example } = o;
  const rules = o.rules ?? [IsString()];
  return {
    env,
    shown,
    example,
    doc,
    default: o.default,
    rules,
    numeric: false,
    read: o.read ?? ((v: string) => v),
  };
}

/**
 * A reader of `knobs` from an environment: each value (or its default) validated against its
 * rules by class-validator, on a class made once with one property per knob. An unset or empty
 * variable takes its default. Throws a ConfigError naming every variable that fails.
 */
export function envReader(knobs: readonly Knob[]): (env: NodeJS.ProcessEnv) => Record<string, unknown> {
  class Env {}
  // Last first, as decorators written above a property apply (the order of a message's reasons).
  for (const k of knobs) for (const rule of [...k.rules].reverse()) rule(Env.prototype, k.env);
  return (env) => {
    const given: Record<string, string> = {};
    const values = new Env() as Record<string, unknown>;
    for (const k of knobs) {
      const v = env[k.env];
      if (v !== undefined && v !== '') given[k.env] = v;
      const raw = given[k.env] ?? k.default;
      values[k.env] = k.numeric && raw !== undefined ? Number(raw) : raw;
    }
    const errors = validateSync(values, { forbidUnknownValues: true });
    if (errors.length > 0) {
      throw new ConfigError(`invalid configuration: ${errors.map((e) => describe(e, given)).join(', ')}`);
    }
    return values;
  };
}

function describe(e: ValidationError, given: Record<string, string>): string {
  const why = Object.values(e.constraints ?? {}).join('; ');
  return `${e.property}=${JSON.stringify(given[e.property])} is invalid: ${why}`;
}
