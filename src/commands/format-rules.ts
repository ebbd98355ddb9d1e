// The rules of the formats a fetch asks for: which names `formats` takes, and how chunks are cut.
import { registerDecorator, type ValidationArguments } from 'class-validator';
import { DEFAULT_CHUNK_TOKENS } from '../pages/chunks';

export const FORMATS = ['markdown', 'text', 'html'] as const;
export const RENDER_MODES = ['never', 'auto', 'always'] as const;
/** What `formats` may name: the content formats, the html as served, links, changes and chunks. */
export const FETCH_FORMATS = [...FORMATS, 'raw_html', 'links', 'changes', 'chunks'] as const;
/** The bounds of `chunk_tokens`. */
export const CHUNK_TOKENS = { min: 64, max: 8192 } as const;

/**
 * A non-empty list of FETCH_FORMATS, each at most once. One rule (not IsArray and IsIn with
 * `each`): a DTO with `each` rules loses the compiled check of flat bodies (validation.pipe.ts).
 */
export function IsFormatList(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isFormatList',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) =>
          `${args.property} must be a list of distinct formats, at least one, of: ${FETCH_FORMATS.join(', ')}`,
      },
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.length > 0 &&
          new Set(value).size === value.length &&
          value.every((f) => (FETCH_FORMATS as readonly unknown[]).includes(f)),
      },
    });
}

/** `chunk_overlap` at most half of `chunk_tokens` (its default when absent). */
export function IsChunkOverlap(): PropertyDecorator {
  const half = (o: object) =>
    Math.floor(
      (((o as { chunk_tokens?: unknown }).chunk_tokens as number | undefined) ?? DEFAULT_CHUNK_TOKENS) / 2,
    );
  return (target, propertyName) =>
    registerDecorator({
      name: 'isChunkOverlap',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) =>
          `chunk_overlap must be at most half of chunk_tokens (${half(args.object)})`,
      },
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          typeof value === 'number' && value <= half(args.object),
      },
    });
}
