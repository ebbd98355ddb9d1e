import { Settings } from 'luxon';

// The cron library under @nestjs/schedule computes each next run with luxon, and luxon, given no
// locale, asks Intl for the system's: one Intl.DateTimeFormat, which maps about 5 MB of ICU locale
// data into the process. sift's only cron jobs run in UTC on numeric fields, which read the same
// in every locale; luxon's own fallback for parsing known formats is en-US. Nothing else in sift
// uses luxon.
Settings.defaultLocale = 'en-US';
