// Bad inputs as each surface takes them: the table test/e2e/one-validation.spec.ts sends to /v1,
// to the Firecrawl routes and to the MCP tools.
import { MAX_REGEX_CHARS } from '../../src/crawl/path-regex';
import { MAX_GLOB_CHARS } from '../../src/crawl/scope';

export const list = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

/**
 * Each bad input as /v1 takes it, as the Firecrawl route takes it (where it has the field), and
 * as the MCP tool takes it; with the names each gives the field where they differ from /v1's.
 */
export interface Row {
  what: string;
  v1: [method: string, path: string, body?: unknown];
  v2?: [path: string, body: unknown, names?: [string, string][]];
  mcp?: [tool: string, args: Record<string, unknown>, names?: [string, string][]];
}
export const badInputs = (u: string): Row[] => {
  const long = `${u}/${'a'.repeat(9_000)}`;
  const glob = `/${'a'.repeat(MAX_GLOB_CHARS)}/**`;
  const tags: [string, string][] = [['include_selectors', 'includeTags']];
  return [
    {
      what: 'a URL of the wrong type',
      v1: ['POST', '/v1/fetch', { url: 5 }],
      v2: ['/v2/scrape', { url: 5 }],
      mcp: ['fetch', { url: 5 }],
    },
    {
      what: 'a URL over 8,192 characters',
      v1: ['POST', '/v1/fetch', { url: long }],
      v2: ['/v2/scrape', { url: long }],
      mcp: ['fetch', { url: long }],
    },
    {
      what: 'a URL not http(s)',
      v1: ['POST', '/v1/fetch', { url: 'ftp://127.0.0.2/a' }],
      v2: ['/v2/scrape', { url: 'ftp://127.0.0.2/a' }],
      mcp: ['fetch', { url: 'ftp://127.0.0.2/a' }],
    },
    {
      what: '21 selectors',
      v1: ['POST', '/v1/fetch', { url: u, include_selectors: list(21, (i) => `p.c${i}`) }],
      v2: ['/v2/scrape', { url: u, includeTags: list(21, (i) => `p.c${i}`) }, tags],
      mcp: ['fetch', { url: u, include_selectors: list(21, (i) => `p.c${i}`) }],
    },
    {
      what: 'selectors as a string',
      v1: ['POST', '/v1/fetch', { url: u, exclude_selectors: 'p' }],
      v2: ['/v2/scrape', { url: u, excludeTags: 'p' }, [['exclude_selectors', 'excludeTags']]],
      mcp: ['fetch', { url: u, exclude_selectors: 'p' }],
    },
    {
      what: 'a selector that is not CSS',
      v1: ['POST', '/v1/fetch', { url: u, include_selectors: ['p['] }],
      v2: ['/v2/scrape', { url: u, includeTags: ['p['] }, tags],
      mcp: ['fetch', { url: u, include_selectors: ['p['] }],
    },
    {
      what: 'links as a string',
      v1: ['POST', '/v1/fetch', { url: u, links: 'yes' }],
      mcp: ['fetch', { url: u, links: 'yes' }],
    },
    {
      what: 'an unknown render mode',
      v1: ['POST', '/v1/fetch', { url: u, render: 'sometimes' }],
      mcp: ['fetch', { url: u, render: 'sometimes' }],
    },
    {
      what: 'a timeout over 120 s',
      v1: ['POST', '/v1/fetch', { url: u, timeout_ms: 999_999 }],
      v2: ['/v2/scrape', { url: u, timeout: 999_999 }, [['timeout_ms', 'timeout']]],
    },
    {
      what: 'a map limit over 30,000',
      v1: ['POST', '/v1/map', { url: u, limit: 30_001 }],
      v2: ['/v2/map', { url: u, limit: 30_001 }],
      mcp: ['map', { url: u, limit: 30_001 }],
    },
    {
      what: 'a map limit as a string',
      v1: ['POST', '/v1/map', { url: u, limit: '5' }],
      v2: ['/v2/map', { url: u, limit: '5' }],
      mcp: ['map', { url: u, limit: '5' }],
    },
    {
      what: '21 globs',
      v1: ['POST', '/v1/map', { url: u, include_paths: list(21, (i) => `/g${i}/**`) }],
      mcp: ['map', { url: u, include_paths: list(21, (i) => `/g${i}/**`) }],
    },
    {
      what: 'a glob over its length cap',
      v1: ['POST', '/v1/crawl', { url: u, exclude_paths: [glob] }],
      mcp: ['crawl', { url: u, exclude_paths: [glob] }],
    },
    // Firecrawl's path patterns are /v1's regular expressions.
    {
      what: '21 path patterns',
      v1: ['POST', '/v1/crawl', { url: u, include_regex: list(21, (i) => `^/g${i}/`) }],
      v2: [
        '/v2/crawl',
        { url: u, includePaths: list(21, (i) => `^/g${i}/`) },
        [['include_regex', 'includePaths']],
      ],
    },
    {
      what: 'a path pattern over its length cap',
      v1: ['POST', '/v1/crawl', { url: u, exclude_regex: [`^/${'a'.repeat(MAX_REGEX_CHARS)}`] }],
      v2: [
        '/v2/crawl',
        { url: u, excludePaths: [`^/${'a'.repeat(MAX_REGEX_CHARS)}`] },
        [['exclude_regex', 'excludePaths']],
      ],
    },
    {
      what: 'a path pattern needing a backtracker',
      v1: ['POST', '/v1/crawl', { url: u, include_regex: ['^/(a)\\1'] }],
      v2: ['/v2/crawl', { url: u, includePaths: ['^/(a)\\1'] }, [['include_regex', 'includePaths']]],
    },
    {
      what: 'globs as a string',
      v1: ['POST', '/v1/map', { url: u, exclude_paths: '/a/**' }],
      mcp: ['map', { url: u, exclude_paths: '/a/**' }],
    },
    {
      what: 'a crawl depth over 20',
      v1: ['POST', '/v1/crawl', { url: u, max_depth: 21 }],
      v2: ['/v2/crawl', { url: u, maxDiscoveryDepth: 21 }, [['max_depth', 'maxDiscoveryDepth']]],
      mcp: ['crawl', { url: u, max_depth: 21 }],
    },
    {
      what: 'a crawl limit of 0',
      v1: ['POST', '/v1/crawl', { url: u, limit: 0 }],
      v2: ['/v2/crawl', { url: u, limit: 0 }],
      mcp: ['crawl', { url: u, limit: 0 }],
    },
    {
      what: 'an unknown sitemap mode',
      v1: ['POST', '/v1/crawl', { url: u, sitemap: 'always' }],
      v2: ['/v2/crawl', { url: u, sitemap: 'always' }],
      mcp: ['crawl', { url: u, sitemap: 'always' }],
    },
    {
      what: "a crawl's page option of the wrong type",
      v1: ['POST', '/v1/crawl', { url: u, options: { format: 'pdf' } }],
      mcp: ['crawl', { url: u, format: 'pdf' }, [['options.', '']]],
    },
    {
      what: 'a job kept under 60 s',
      v1: ['POST', '/v1/batch', { targets: [{ url: u }], ttl_s: 59 }],
      mcp: ['batch_submit', { urls: [u], ttl_s: 59 }],
    },
    {
      what: "a batch's URLs as a string",
      v1: ['POST', '/v1/batch', { targets: u }],
      mcp: ['batch_submit', { urls: u }, [['targets', 'urls']]],
    },
    {
      what: "a batch's page option of the wrong type",
      v1: ['POST', '/v1/batch', { targets: [{ url: u }], options: { include_selectors: 'p' } }],
      v2: [
        '/v2/batch/scrape',
        { urls: [u], includeTags: 'p' },
        [['options.include_selectors', 'includeTags']],
      ],
      mcp: ['batch_submit', { urls: [u], include_selectors: 'p' }, [['options.', '']]],
    },
    {
      what: 'a results cursor past 32 bits',
      v1: ['GET', '/v1/batch/no-such-job/results?after=2147483648'],
      mcp: ['batch_results', { id: 'no-such-job', cursor: 2_147_483_648 }, [['after', 'cursor']]],
    },
  ];
};
