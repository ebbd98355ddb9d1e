/**
 * Polls `probe` until it returns something other than undefined, and returns that; fails with
 * `what` (or what it returns then, such as the last state seen) when the deadline passes. Every
 * wait in the tests goes through here: none sleeps a fixed time and then looks.
 */
export async function waitUntil<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string | (() => string),
  timeoutMs = 20_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Lets `ms` pass on purpose, for a time that is itself what the test is about: a fake resource
 * that is slow, a moment picked at random to crash at, a window in which something must not
 * happen. It is never a wait for something to happen (that is waitUntil); `why` says which time
 * it is, for the reader.
 */
export function idle(ms: number, why: string): Promise<void> {
  if (!why) throw new Error('idle: say why the test lets time pass');
  return new Promise((r) => setTimeout(r, ms));
}
