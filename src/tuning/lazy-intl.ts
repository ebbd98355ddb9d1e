// @nestjs/common builds two Intl.DateTimeFormat objects as it loads, for the timestamps of its text
// logger. Building one maps about 5 MB of ICU locale data into the process and allocates about 3 MB
// more, and sift never formats with them: it logs JSON, whose timestamps are numbers. While
// @nestjs/common loads, a DateTimeFormat is built on its first use. This module is the entry points'
// import after ./threadpool, before anything else loads @nestjs/common.
const DateTimeFormat = Intl.DateTimeFormat;

function lazyDateTimeFormat(
  locales?: string | string[],
  options?: Intl.DateTimeFormatOptions,
): Intl.DateTimeFormat {
  let made: Intl.DateTimeFormat | undefined;
  const real = () => (made ??= new DateTimeFormat(locales, options));
  const lazy: Pick<Intl.DateTimeFormat, 'format' | 'formatToParts' | 'resolvedOptions'> = {
    format: (date) => real().format(date),
    formatToParts: (date) => real().formatToParts(date),
    resolvedOptions: () => real().resolvedOptions(),
  };
  return lazy as Intl.DateTimeFormat;
}

Intl.DateTimeFormat = lazyDateTimeFormat as unknown as typeof Intl.DateTimeFormat;
try {
  require('@nestjs/common');
} finally {
  Intl.DateTimeFormat = DateTimeFormat;
}
