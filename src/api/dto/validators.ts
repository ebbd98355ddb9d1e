import { registerDecorator, type ValidationOptions } from 'class-validator';
import { compile } from 'css-select';
import { isHttpUrl } from '../../common/urls';

export { MAX_URL_LENGTH } from '../../common/urls';

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
      options: { message: '$property must be "whsec_" and the base64 of 24 to 64 bytes', ...options },
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

/** A list of CSS selectors (at most 20, each at most 500 characters) that the extractor can run. */
export function IsSelectorList(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isSelectorList',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must be at most 20 valid CSS selectors', ...options },
      validator: {
        validate(value: unknown) {
          if (!Array.isArray(value) || value.length > 20) return false;
          return value.every((v) => {
            if (typeof v !== 'string' || v.trim().length === 0 || v.length > 500) return false;
            try {
              // The selector engine the extractor's DOM runs: what it refuses, it would refuse there.
              compile(v);
              return true;
            } catch {
              return false;
            }
          });
        },
      },
    });
}
