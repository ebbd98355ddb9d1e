import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { invalidRequest } from '../common/errors';
import { isHttpUrl } from '../common/urls';
import { selectorProblem } from '../extract/selector-limits';
import { pageRangesError } from '../documents';

export { MAX_URL_LENGTH } from '../common/urls';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** An absolute http(s) URL, as the WHATWG parser reads it. */
export function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isHttpUrl',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must be an absolute http or https URL', ...options },
      validator: { validate: isHttpUrl },
    });
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes. */
export function IsWebhookSecret(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isWebhookSecret',
      target: target.constructor,
      propertyName: propertyName as string,
      // Never the value: a secret is not echoed, not even a wrong one.
      options: {
        message:
          '$property must be "whsec_" and the base64 of 24 to 64 bytes (`sift webhook-secret` makes one)',
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string') return false;
          const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
          if (!m || m[1].length % 4 !== 0) return false;
          const n = Buffer.from(m[1], 'base64').length;
          return n >= 24 && n <= 64;
        },
      },
    });
}

/** A flat object of header name → string value (at most 32 headers, 8 KiB each). */
export function IsHeaderMap(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isHeaderMap',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: '$property must be an object of header names to string values (at most 32)',
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
          const entries = Object.entries(value);
          return (
            entries.length <= 32 &&
            entries.every(
              ([k, v]) => TOKEN.test(k) && typeof v === 'string' && v.length <= 8192 && !/[\r\n\0]/.test(v),
            )
          );
        },
      },
    });
}

/** Cookies in one request, and the length of a `cookies` header string. */
export const MAX_COOKIES = 50;
const COOKIE_FIELDS: Record<string, [max: number, required: boolean]> = {
  name: [256, true],
  value: [4096, true],
  domain: [253, false],
  path: [1024, false],
};

/** A Cookie header's value (at most 8 KiB), or a list of {name, value, domain?, path?} (at most MAX_COOKIES). */
export function IsCookies(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isCookies',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be a Cookie header's value (at most 8192 characters) or a list of at most ${MAX_COOKIES} objects {name, value, domain?, path?} of strings`,
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value === 'string') return value.length <= 8192;
          if (!Array.isArray(value) || value.length > MAX_COOKIES) return false;
          return value.every(
            (c) =>
              typeof c === 'object' &&
              c !== null &&
              !Array.isArray(c) &&
              Object.keys(c).every((k) => k in COOKIE_FIELDS) &&
              Object.entries(COOKIE_FIELDS).every(([k, [max, required]]) => {
                const v = (c as Record<string, unknown>)[k];
                return v === undefined ? !required : typeof v === 'string' && v.length <= max;
              }),
          );
        },
      },
    });
}

/**
 * Characters of distinct selectors one request may carry. Each distinct selector is compiled once
 * when the request is validated, on the main thread: 6,820 selectors in one 2 MiB batch body held
 * it 4 s. Within the cap a request's selectors take milliseconds.
 */
export const MAX_SELECTOR_CHARS = 20_000;

/** What each distinct selector of a request was found to be (see selectorProblem), per options object. */
const requestVerdicts = new WeakMap<object, Map<string, string | undefined>>();

function verdictsOf(options: object): Map<string, string | undefined> {
  let verdicts = requestVerdicts.get(options);
  if (!verdicts) requestVerdicts.set(options, (verdicts = new Map()));
  return verdicts;
}

function problemOf(verdicts: Map<string, string | undefined>, selector: string): string | undefined {
  if (!verdicts.has(selector)) verdicts.set(selector, selectorProblem(selector));
  return verdicts.get(selector);
}

const isSelectorText = (v: unknown): v is string =>
  typeof v === 'string' && v.trim().length > 0 && v.length <= 500;

/**
 * A list of CSS selectors (at most 20, each at most 500 characters) that the extractor can run,
 * each within the shape selector-limits.ts allows.
 */
export function IsSelectorList(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isSelectorList',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) => {
          const value: unknown = args.value;
          if (Array.isArray(value) && value.length <= 20 && value.every(isSelectorText)) {
            const verdicts = verdictsOf(args.object);
            for (const v of value) {
              const problem = problemOf(verdicts, v);
              if (problem) return `${args.property} selector ${JSON.stringify(v.slice(0, 100))} ${problem}`;
            }
          }
          return `${args.property} must be at most 20 valid CSS selectors of at most 500 characters`;
        },
        ...options,
      },
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          if (!Array.isArray(value) || value.length > 20 || !value.every(isSelectorText)) return false;
          const verdicts = verdictsOf(args.object);
          return value.every((v) => problemOf(verdicts, v) === undefined);
        },
      },
    });
}

/** One CSS selector of at most `max` characters, within the shape selector-limits.ts allows. */
export function IsSelector(max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isSelector',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) => {
          const v: unknown = args.value;
          const problem =
            typeof v === 'string' && v.trim() && v.length <= max ? selectorProblem(v) : undefined;
          return problem
            ? `${args.property} selector ${JSON.stringify(v).slice(0, 100)} ${problem}`
            : `${args.property} must be a valid CSS selector of at most ${max} characters`;
        },
        ...options,
      },
      validator: {
        validate: (v: unknown) =>
          typeof v === 'string' && v.trim().length > 0 && v.length <= max && selectorProblem(v) === undefined,
      },
    });
}

const SELECTOR_FIELDS = ['include_selectors', 'exclude_selectors'] as const;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * On a batch's `targets`: every options object of the body (each target's and the job's) shares
 * one record of its selectors' verdicts, so each distinct selector is compiled once. Distinct
 * selectors over MAX_SELECTOR_CHARS in all refuse the whole body at once, before any is compiled.
 * Runs before the targets' own validation (class-validator checks a property, then what it holds).
 */
export function SelectorBudget(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'selectorBudget',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate(targets: unknown, args: ValidationArguments) {
          const holders: Record<string, unknown>[] = [];
          const shared = (args.object as { options?: unknown }).options;
          if (isObject(shared)) holders.push(shared);
          if (Array.isArray(targets)) {
            for (const t of targets as unknown[])
              if (isObject(t) && isObject(t.options)) holders.push(t.options);
          }
          const distinct = new Set<string>();
          let chars = 0;
          for (const holder of holders) {
            for (const field of SELECTOR_FIELDS) {
              const list = holder[field];
              if (!Array.isArray(list)) continue;
              for (const s of list as unknown[]) {
                if (typeof s !== 'string' || distinct.has(s)) continue;
                distinct.add(s);
                chars += s.length;
                // Thrown, not reported: the rest of the body is not validated (nor compiled).
                if (chars > MAX_SELECTOR_CHARS) throw tooManySelectorChars();
              }
            }
          }
          const verdicts = new Map<string, string | undefined>();
          for (const holder of holders) requestVerdicts.set(holder, verdicts);
          return true;
        },
      },
    });
}

const tooManySelectorChars = () =>
  invalidRequest(
    `the distinct include_selectors and exclude_selectors of this request are over ${MAX_SELECTOR_CHARS} characters in all`,
    'send the selectors once in the job\'s "options" instead of in each target, or split the targets over several jobs',
  );

/** A PDF's `pages` option: page ranges like "1-5,9" (see pageRangesError). */
export function IsPageRanges(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isPageRanges',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) =>
          `${args.property} ${typeof args.value === 'string' ? pageRangesError(args.value) : 'must be a string'}: write pages as ranges like "1-5,9" (pages count from 1)`,
        ...options,
      },
      validator: { validate: (v: unknown) => typeof v === 'string' && pageRangesError(v) === undefined },
    });
}

/** An Idempotency-Key header: 1 to 256 characters. */
export function checkIdemKey(idemKey: string | undefined): void {
  if (idemKey !== undefined && (idemKey.length === 0 || idemKey.length > 256)) {
    throw invalidRequest('Idempotency-Key must be 1 to 256 characters', 'send a shorter key, such as a UUID');
  }
}

/** `profile`: `{name, save?}`, a name of 1-64 letters, digits, `_`, `.` or `-`. */
export function IsProfileRef(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isProfileRef',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message:
          '$property must be {name, save?}: a name of 1 to 64 letters, digits, "_", "." or "-", and save a boolean',
      },
      validator: {
        validate(v: unknown) {
          if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
          const o = v as Record<string, unknown>;
          return (
            Object.keys(o).every((k) => k === 'name' || k === 'save') &&
            typeof o.name === 'string' &&
            /^[A-Za-z0-9_.-]{1,64}$/.test(o.name) &&
            (o.save === undefined || typeof o.save === 'boolean')
          );
        },
      },
    });
}
