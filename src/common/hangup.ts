import type { Response } from 'express';

/**
 * What stops a call's wait when its caller hangs up: `signal()` makes the signal when a wait begins
 * (a cache hit answers without one, so it never pays for it), aborted when the response closes
 * before it is written; `done()` stops listening.
 */
export function hangup(res: Response): { signal: () => AbortSignal; done: () => void } {
  let gone: AbortController | undefined;
  const onClose = () => {
    if (!res.writableFinished) gone?.abort();
  };
  return {
    signal: () => {
      if (!gone) {
        gone = new AbortController();
        if (!res.socket || res.socket.destroyed) gone.abort();
        else res.once('close', onClose);
      }
      return gone.signal;
    },
    done: () => res.off('close', onClose),
  };
}
