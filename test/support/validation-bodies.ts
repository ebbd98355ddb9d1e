import fc from 'fast-check';

/*
 * Request bodies for the validation pipe's property tests: valid most of the time, anything at all
 * now and then, in the shapes JSON gives.
 */

/** What the body parser hands the pipe: a fresh JSON.parse of the value. */
export const asBody = (value: unknown): unknown => {
  const json = JSON.stringify(value);
  return json === undefined ? undefined : JSON.parse(json);
};

/** A key Nest's pipe deletes from every object before class-transformer sees it. */
export const STRIPPED_KEY = /"(__proto__|prototype|constructor)"/;

export const anyValue = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.integer({ min: -5, max: 200000 }),
  fc.double(),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('markdown', 'text', 'html', 'pdf', 'http://a.test/', 'ftp://a.test/', '5'),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
);
/** Mostly `good`, and one time in `odds` anything at all. */
export const field = <T>(good: fc.Arbitrary<T>, odds = 7) =>
  fc.oneof({ weight: odds - 1, arbitrary: good }, { weight: 1, arbitrary: anyValue });
export const urlOf = (odds?: number) =>
  field(
    fc.oneof(
      fc.webUrl(),
      fc.constantFrom(
        'http://127.0.0.1:8080/x',
        'https://ex.test/a?b=c',
        'http://',
        'file:///etc/passwd',
        ' ',
      ),
    ),
    odds,
  );
export const url = urlOf();
/** A fetch's options, valid most of the time: a /v1/fetch body without its url, a target's options. */
export const optionFieldsOf = (odds?: number) => ({
  format: field(fc.constantFrom('markdown', 'text', 'html'), odds),
  timeout_ms: field(fc.integer({ min: 0, max: 130000 }), odds),
  max_bytes: field(fc.integer({ min: 0, max: 1e9 }), odds),
  max_age_s: field(fc.integer({ min: -1, max: 1e9 }), odds),
  formats: field(
    fc.uniqueArray(fc.constantFrom('markdown', 'text', 'html', 'links'), { minLength: 1 }),
    odds,
  ),
  include_selectors: field(fc.array(fc.constantFrom('main', 'p.a', 'article > p'), { maxLength: 3 }), odds),
  headers: field(
    fc.dictionary(
      fc.oneof(
        { weight: 9, arbitrary: fc.constantFrom('accept', 'x-a', 'x-b') },
        { weight: 1, arbitrary: fc.constantFrom('bad header', 'constructor') },
      ),
      fc.oneof(
        { weight: 9, arbitrary: fc.constantFrom('v', '') },
        { weight: 1, arbitrary: fc.constant('a\r\nb') },
      ),
      { maxKeys: 3 },
    ),
    odds,
  ),
});
