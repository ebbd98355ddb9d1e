import { registerDecorator, type ValidationOptions } from 'class-validator';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** An absolute http(s) URL, as the WHATWG parser reads it. */
export function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isHttpUrl',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must be an absolute http or https URL', ...options },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string') return false;
          try {
            const u = new URL(value);
            return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
          } catch {
            return false;
          }
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
