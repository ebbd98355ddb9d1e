import fc from 'fast-check';
import { fingerprintInSlices, fingerprintOf } from '../../src/batch/canonical';
import { TimeSlicer } from '../../src/common/time-slice';

/**
 * An idempotency key replays a job only while the request's fingerprint is the same: the digest
 * made in slices must be the digest made at once, for every body (stored jobs keep theirs).
 */
describe('request fingerprints', () => {
  it('in slices, the same digest as at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (v) => {
        // A slice of 0 ms takes a turn after every item: the most cuts a body can get.
        expect(await fingerprintInSlices(v, new TimeSlicer(0))).toBe(fingerprintOf(v));
      }),
      { numRuns: 500 },
    );
  });

  it('a batch of 10,000 targets, the same digest, in slices', async () => {
    const body = {
      targets: Array.from({ length: 10_000 }, (_, i) => ({
        url: `https://a.test/${i}`,
        options: { z: 1, a: [i] },
      })),
      options: null,
      on_restart: 'fail',
      ignore_invalid_urls: false,
    };
    expect(await fingerprintInSlices(body, new TimeSlicer())).toBe(fingerprintOf(body));
  });
});
