import { isStorageUnavailable } from './errors';

/**
 * Runs `write` until it goes through, waiting while the database cannot be reached (250 ms, then
 * doubling up to 5 s between tries): what sift owes the database (a result, a delivery's outcome)
 * is kept, not dropped, through an outage. Any other failure rejects at once; so does `write`
 * failing after `gaveUp()` turns true (the process is stopping).
 */
export async function untilStored<T>(
  write: () => Promise<T>,
  opts: { gaveUp?: () => boolean; waiting?: (err: unknown) => void } = {},
): Promise<T> {
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await write();
    } catch (err) {
      if (!isStorageUnavailable(err) || opts.gaveUp?.()) throw err;
      opts.waiting?.(err);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
