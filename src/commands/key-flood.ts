import { getMetadataStorage } from 'class-validator';
import type { Dto } from './compiled-check';

/** Keys a body's DTO does not declare (or a list's items) the full pipe is given; the rest are counted. */
export const FLOOD_KEPT = 16;

/** The keys Nest's pipe deletes from every object before anything sees them (never reported). */
const STRIPPED = new Set(['__proto__', 'prototype', 'constructor']);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/** The properties a DTO declares rules for: what its whitelist lets through. */
export function declaredOf(dto: Dto): Set<string> {
  return new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(dto, '', false, false)
      .map((m) => m.propertyName),
  );
}

/**
 * A body with more than FLOOD_KEPT keys its DTO does not declare, or a list where the DTO's object
 * belongs longer than that. The full pipe copies them all, then reports each such key (each index
 * of the list) as a property that should not exist, before any other error, one message each, and
 * shows ten messages and a count: 200,000 keys in a 2 MiB body took it seconds. The body with only
 * the first `kept` of them (in the order the pipe reports them) has the same answer but for
 * the count; `hidden` is how many were left out. Undefined when the body has no such flood.
 */
export function withoutFlood(
  value: unknown,
  declared: Set<string>,
  kept = FLOOD_KEPT,
): { body: unknown; hidden: number } | undefined {
  if (Array.isArray(value)) {
    return value.length > kept ? { body: value.slice(0, kept), hidden: value.length - kept } : undefined;
  }
  if (!isPlainObject(value)) return undefined;
  const keys = Object.keys(value).filter((k) => !STRIPPED.has(k));
  const unknown = keys.filter((k) => !declared.has(k));
  if (unknown.length <= kept) return undefined;
  const some = new Set(unknown.slice(0, kept));
  const body: Record<string, unknown> = {};
  for (const k of keys) if (declared.has(k) || some.has(k)) body[k] = value[k];
  return { body, hidden: unknown.length - kept };
}
