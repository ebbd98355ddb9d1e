import { pageOfContent, type FileSent, type ResultsPage, type SiftPort } from './tools';

/**
 * One request to sift's REST API: the JSON answer, or a thrown `{code, message, hint}` for an
 * error envelope (the command line supplies it over its own HTTP client). With a file, the body is
 * multipart/form-data: the file, and `body` as its part "options".
 */
export type RestCall = (
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  file?: FileSent,
) => Promise<unknown>;

const job = (id: string) => `/v1/batch/${encodeURIComponent(id)}`;

/**
 * The tools' port over sift's REST API (`sift mcp`): the token's caller, class and policy apply
 * there, and each body is checked by its route's DTO.
 */
export function httpPort(call: RestCall): SiftPort {
  return {
    fetchPage: async (body, offset, maxChars, maxTokens) => {
      const envelope = (await call('POST', '/v1/fetch', body)) as Record<string, unknown> & {
        content: string;
      };
      return pageOfContent(envelope, offset, maxChars, maxTokens);
    },
    parsePage: async (file, body, offset, maxChars, maxTokens) => {
      const envelope = (await call('POST', '/v1/parse', body, file)) as Record<string, unknown> & {
        content: string;
      };
      return pageOfContent(envelope, offset, maxChars, maxTokens);
    },
    batchSubmit: (body) => call('POST', '/v1/batch', body),
    batchStatus: (id) => call('GET', job(id)),
    batchResults: async (id, cursor, limit) =>
      (await call('GET', `${job(id)}/results?after=${cursor}&limit=${limit}`)) as ResultsPage,
    crawl: (body) => call('POST', '/v1/crawl', body),
    map: (body) => call('POST', '/v1/map', body),
    cancel: (id) => call('DELETE', job(id)),
    monitorCreate: (body) => call('POST', '/v1/monitors', body),
    monitorList: () => call('GET', '/v1/monitors'),
    monitorRuns: (id) => call('GET', `/v1/monitors/${encodeURIComponent(id)}/runs`),
    search: (body) => call('POST', '/v1/search', body),
  };
}
