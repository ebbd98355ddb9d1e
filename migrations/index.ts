import type { Migration } from 'kysely';
import * as m0001 from './0001-batch-store';
import * as m0002 from './0002-instances';
import * as m0003 from './0003-pipelines';
import * as m0004 from './0004-good-citizen';

// Imported statically so the build carries them and no file-system scan is needed at start.
export const migrations: Record<string, Migration> = {
  '0001-batch-store': m0001,
  '0002-instances': m0002,
  '0003-pipelines': m0003,
  '0004-good-citizen': m0004,
};
