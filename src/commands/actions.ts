import { registerDecorator, type ValidationArguments } from 'class-validator';
import { selectorProblem } from '../extract/selector-limits';

/** Actions one render may take. */
export const MAX_ACTIONS = 50;
export const ACTION_TYPES = [
  'wait',
  'click',
  'write',
  'press',
  'scroll',
  'screenshot',
  'scrape',
  'executeJavascript',
] as const;

type Field = [check: (v: unknown) => boolean, must: string];

const selector: Field = [
  (v) => typeof v === 'string' && v.trim().length > 0 && v.length <= 512 && selectorProblem(v) === undefined,
  'must be a valid CSS selector of at most 512 characters',
];
const boolean: Field = [(v) => typeof v === 'boolean', 'must be a boolean'];
const text = (max: number): Field => [
  (v) => typeof v === 'string' && v.length > 0 && v.length <= max,
  `must be a string of 1 to ${max} characters`,
];

/** Each action's fields beside `type`, what each must be, and which are required. */
const FIELDS: Record<(typeof ACTION_TYPES)[number], { fields: Record<string, Field>; required: string[] }> = {
  wait: {
    fields: {
      milliseconds: [
        (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 60_000,
        'must be a whole number of milliseconds from 1 to 60000',
      ],
      selector,
    },
    required: [],
  },
  click: { fields: { selector, all: boolean }, required: ['selector'] },
  write: { fields: { text: text(10_000) }, required: ['text'] },
  press: { fields: { key: text(64) }, required: ['key'] },
  scroll: {
    fields: { direction: [(v) => v === 'up' || v === 'down', 'must be "up" or "down"'], selector },
    required: [],
  },
  screenshot: { fields: { fullPage: boolean }, required: [] },
  scrape: { fields: {}, required: [] },
  executeJavascript: { fields: { script: text(100_000) }, required: ['script'] },
};

/** Why `value` is not a list of actions, naming the first bad one (`.3.selector must be…`), or undefined. */
export function actionsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length > MAX_ACTIONS)
    return ` must be a list of at most ${MAX_ACTIONS} actions`;
  for (const [i, a] of (value as unknown[]).entries()) {
    if (typeof a !== 'object' || a === null || Array.isArray(a)) return `.${i} must be an object`;
    const o = a as Record<string, unknown>;
    if (typeof o.type !== 'string' || !Object.hasOwn(FIELDS, o.type))
      return `.${i}.type must be one of: ${ACTION_TYPES.join(', ')}`;
    const shape = FIELDS[o.type as keyof typeof FIELDS];
    for (const k of Object.keys(o)) {
      if (k === 'type') continue;
      const field = shape.fields[k];
      if (!field) return `.${i}.${k} is not a field of ${o.type}`;
      if (!field[0](o[k])) return `.${i}.${k} ${field[1]}`;
    }
    const missing = shape.required.find((k) => o[k] === undefined);
    if (missing) return `.${i}.${missing} is required by ${o.type}`;
    if (o.type === 'wait' && (o.milliseconds === undefined) === (o.selector === undefined))
      return `.${i} (wait) takes one of milliseconds or selector`;
  }
  return undefined;
}

/** Steps on a rendered page (Firecrawl's list and shapes), at most MAX_ACTIONS; see actionsProblem. */
export function IsActions(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isActions',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) => `${args.property}${actionsProblem(args.value) ?? ''}`,
      },
      validator: { validate: (v: unknown) => actionsProblem(v) === undefined },
    });
}
