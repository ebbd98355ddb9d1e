import type { Migration } from 'kysely';
import * as m0001 from './0001-batch-store';
import * as m0002 from './0002-instances';
import * as m0003 from './0003-job-ttl-retries-webhooks';
import * as m0004 from './0004-robots-and-host-state';
import * as m0005 from './0005-caller-fair-outbox';
import * as m0006 from './0006-cancelled-targets-precise-times';
import * as m0007 from './0007-crawls';
import * as m0008 from './0008-statement-counts';
import * as m0009 from './0009-counts-planned-per-statement';
import * as m0010 from './0010-browser-profiles';
import * as m0011 from './0011-page-history-monitors';
import * as m0012 from './0012-search-index';
import * as m0013 from './0013-search-words-by-sift';

// Imported statically so the build carries them and no file-system scan is needed at start.
export const migrations: Record<string, Migration> = {
  '0001-batch-store': m0001,
  '0002-instances': m0002,
  '0003-job-ttl-retries-webhooks': m0003,
  '0004-robots-and-host-state': m0004,
  '0005-caller-fair-outbox': m0005,
  '0006-cancelled-targets-precise-times': m0006,
  '0007-crawls': m0007,
  '0008-statement-counts': m0008,
  '0009-counts-planned-per-statement': m0009,
  '0010-browser-profiles': m0010,
  '0011-page-history-monitors': m0011,
  '0012-search-index': m0012,
  '0013-search-words-by-sift': m0013,
};

/**
 * Migrations named once after when they were written, now after what they hold. A database that
 * applied one under its old name has the row renamed before migrating (see dcache's migrate), so
 * it is not applied twice.
 */
export const RENAMED: Record<string, string> = {
  '0003-pipelines': '0003-job-ttl-retries-webhooks',
  '0004-good-citizen': '0004-robots-and-host-state',
};
