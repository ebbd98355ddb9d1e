import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { invalidRequest } from '../common/errors';
import { compileCheck, type Check, type Dto } from './compiled-check';

export { compileCheck } from './compiled-check';

function fieldErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => (prefix ? `${prefix}.${m}` : m));
    return [...own, ...fieldErrors(e.children ?? [], path)];
  });
}

/**
 * The app's ValidationPipe (transform, whitelist, unknown fields rejected), answering
 * 400 invalid_request naming the bad fields. A body that passes the DTO's rules compiled (see
 * compileCheck: flat DTOs, and DTOs nesting such, a batch's 10,000 targets checked in slices) is
 * returned without the full pipe; every other body, and every body with an error, goes through
 * class-transformer and class-validator as usual.
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
      const entity = check ? await check(value) : undefined;
      if (entity) return entity;
    }
    return super.transform(value, metadata);
  }
}
