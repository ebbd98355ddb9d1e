import { optionsOf, pageOfContent, type ResultsPage, type SiftPort } from './tools';

/**
 * One request to sift's REST API: the JSON answer, or a thrown `{code, message, hint}` for an
 * error envelope (the command line supplies it over its own HTTP client).
 */
export type RestCall = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => Promise<unknown>;

const job = (id: string) => `/v1/batch/${encodeURIComponent(id)}`;

/** Without its undefined fields. */
function strip<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The tools' port over sift's REST API (`sift mcp`): the token's caller, class and policy apply there. */
export function httpPort(call: RestCall): SiftPort {
  return {
    fetchPage: async (args, offset, maxChars) => {
      const envelope = (await call('POST', '/v1/fetch', strip(args))) as { content: string };
      return JSON.stringify(pageOfContent(envelope, offset, maxChars));
    },
    batchSubmit: (a) =>
      call(
        'POST',
        '/v1/batch',
        strip({ targets: a.urls.map((url) => ({ url })), options: optionsOf(a), ttl_s: a.ttl_s }),
      ),
    batchStatus: (id) => call('GET', job(id)),
    batchResults: async (id, cursor, limit) =>
      (await call('GET', `${job(id)}/results?after=${cursor}&limit=${limit}`)) as ResultsPage,
    crawl: ({ url, limit, max_depth, include_paths, exclude_paths, sitemap, ...rest }) =>
      call(
        'POST',
        '/v1/crawl',
        strip({ url, limit, max_depth, include_paths, exclude_paths, sitemap, options: optionsOf(rest) }),
      ),
    map: (a) => call('POST', '/v1/map', strip(a)),
    cancel: (id) => call('DELETE', job(id)),
  };
}
