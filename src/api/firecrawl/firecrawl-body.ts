/**
 * The /v2 routes' validation: the Firecrawl body, once translated to sift's field names, is checked
 * by sift's own DTO with the app's pipe (the same rules, limits and 400s as on /v1).
 */
import type { Type } from '@nestjs/common';
import { SiftValidationPipe } from '../validation.pipe';

const pipe = new SiftValidationPipe();

/** The translated body as the DTO's instance, or sift's 400 naming the bad fields. */
export async function siftBody<T extends object>(dto: Type<T>, body: Record<string, unknown>): Promise<T> {
  return (await pipe.transform(body, { type: 'body', metatype: dto, data: '' })) as T;
}
