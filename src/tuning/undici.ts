import type { Agent as UndiciAgent, Dispatcher } from 'undici';

// undici's index loads all of undici: fetch, WebSocket, EventSource, caches, mocks, proxies, about
// 3 MB of heap that sift never uses. sift needs its Agent (pools, keep-alive) and its request
// API, which takes the dispatcher as `this` (Dispatcher.request in undici's documentation).
// undici has no `exports` map, so these paths load; the lockfile pins the version they exist in.
export const Agent: typeof UndiciAgent = require('undici/lib/dispatcher/agent');
const undiciRequest: (
  this: Dispatcher,
  o: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData> = require('undici/lib/api/api-request');
export type Agent = UndiciAgent;

/** One request through `dispatcher`: undici's `request(url, opts)` without its index. */
export function request(
  url: URL,
  o: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher },
): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = o;
  return undiciRequest.call(dispatcher, { ...rest, origin: url.origin, path: url.pathname + url.search });
}
