import type * as TransformerStorage from 'class-transformer/types/storage';

/**
 * The storage class-transformer reads its decorators from (the same path @nestjs/mapped-types
 * uses): the validation pipe compiles a DTO's rules from it.
 */
export const { defaultMetadataStorage } =
  require('class-transformer/cjs/storage') as typeof TransformerStorage;
