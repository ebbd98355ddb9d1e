// The tools' arguments: their schemas, as the model reads them, and the REST bodies they become.
// Like tools.ts, this file loads no server code (`sift mcp` loads it too).
import { z } from 'zod';

/** A REST body: POST /v1/fetch's, /v1/batch's, /v1/crawl's or /v1/map's. */
export type Body = Record<string, unknown>;

/** A tool's content is at most this many characters by default (about 20k tokens). */
export const DEFAULT_MAX_CHARS = 80_000;
export const RESULTS_MAX_LIMIT = 20;

/**
 * A field that becomes a field of sift's command: the model reads its type in the tool's schema,
 * and the value goes on as sent, for sift's DTO to judge (types, lengths, counts, ranges) in the
 * words /v1 uses. Checked here, a wrong type would be refused in the SDK's words instead, and a
 * limit written here would be a second copy of the DTO's.
 */
export function asSent(type: z.ZodType) {
  const schema: Record<string, unknown> = z.toJSONSchema(type, { target: 'draft-7', io: 'input' });
  // The tool's schema names its dialect once, at its root.
  delete schema.$schema;
  return z.unknown().meta(schema);
}

const FORMATS = ['markdown', 'text', 'html'] as const;
const SITEMAP = z.enum(['include', 'skip', 'only']);

/** Fetch options a batch or a crawl applies to each page, as the REST API names them. */
export const pageOptions = {
  format: asSent(z.enum(FORMATS)).optional().describe("The content's format (default markdown)."),
  include_selectors: asSent(z.array(z.string())).optional().describe('CSS selectors: keep only these parts.'),
  exclude_selectors: asSent(z.array(z.string())).optional().describe('CSS selectors: drop these parts.'),
  links: asSent(z.boolean())
    .optional()
    .describe("Also the page's links (the whole page's, navigation and footer too)."),
  render: asSent(z.enum(['never', 'auto', 'always']))
    .optional()
    .describe('Run a browser: never, auto (when the page needs it), always.'),
  cookies: asSent(
    z.union([
      z.string(),
      z.array(
        z.object({
          name: z.string(),
          value: z.string(),
          domain: z.string().optional(),
          path: z.string().optional(),
        }),
      ),
    ]),
  )
    .optional()
    .describe(
      "Cookies for the URL's site: a Cookie header's value, or a list of {name, value, domain?, path?}. Sent only where their scope says.",
    ),
  profile: asSent(z.object({ name: z.string(), save: z.boolean().optional() }))
    .optional()
    .describe(
      "One of the caller's browser profiles: {name} fetches with its cookies and storage; {name, save: true} renders and keeps the browser's state in it (after a login done with actions, say).",
    ),
  proxy: asSent(z.string())
    .optional()
    .describe("The name of one of the server's egress proxies to fetch through (its operator names them)."),
  actions: asSent(
    z.array(
      z.object({
        type: z.enum(['wait', 'click', 'write', 'press', 'scroll', 'scrape', 'executeJavascript']),
        milliseconds: z.number().int().optional(),
        selector: z.string().optional(),
        all: z.boolean().optional(),
        text: z.string().optional(),
        key: z.string().optional(),
        direction: z.enum(['up', 'down']).optional(),
        script: z.string().optional(),
      }),
    ),
  )
    .optional()
    .describe(
      'Steps in a browser before the page is read, in order (at most 50): {type:"click",selector}, {type:"wait",milliseconds|selector}, {type:"write",text} (click the field first), {type:"press",key}, {type:"scroll",direction?}, {type:"scrape"} (the html at that point, in actions.scrapes). The content is the page after them.',
    ),
};

/** How much of the content one answer holds, and where it starts (the fetch and parse tools'). */
export const pagingShape = {
  max_chars: z
    .number()
    .int()
    .min(1000)
    .max(1_000_000)
    .optional()
    .describe(`At most this many characters of content (default ${DEFAULT_MAX_CHARS}).`),
  max_tokens: z
    .number()
    .int()
    .min(100)
    .max(1_000_000)
    .optional()
    .describe('At most this many tokens (o200k_base) of content, within max_chars.'),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Where the content starts: a previous answer's next_offset."),
};
export const fetchShape = {
  url: asSent(z.string()).describe('An absolute http or https URL.'),
  ...pageOptions,
  changes: z
    .boolean()
    .optional()
    .describe(
      'Also how the page changed since your previous fetch of it with the same options: `changes` {status: new|same|changed|removed, previous_at, diff: {text (a unified diff of the markdown), added, removed}}.',
    ),
  ...pagingShape,
};
export const batchShape = {
  urls: asSent(z.array(z.string())).describe('The URLs to fetch, each a target of one job.'),
  ...pageOptions,
  ttl_s: asSent(z.number().int()).optional().describe('Keep the job this many seconds after it ends.'),
};
const scopeShape = {
  include_paths: asSent(z.array(z.string())).optional().describe('Path globs a URL must match.'),
  exclude_paths: asSent(z.array(z.string())).optional().describe('Path globs that leave a URL out.'),
  sitemap: asSent(SITEMAP).optional().describe("The site's sitemaps: include, skip, only."),
  llms_txt: asSent(SITEMAP).optional().describe("The site's /llms.txt links: include, skip, only."),
};
export const crawlShape = {
  url: asSent(z.string()).describe('The page to start from.'),
  limit: asSent(z.number().int()).optional().describe('At most this many pages (default 100).'),
  max_depth: asSent(z.number().int())
    .optional()
    .describe('At most this many hops from the seed (default 3).'),
  path_prefix: asSent(z.string())
    .optional()
    .describe('Only URLs whose path starts with this, such as /docs/guide/ (default: the whole site).'),
  ...scopeShape,
  ...pageOptions,
};
export const mapShape = {
  url: asSent(z.string()).describe("The site's page to map from."),
  limit: asSent(z.number().int()).optional().describe('At most this many URLs (default 5000).'),
  ...scopeShape,
};
export const monitorShape = {
  name: asSent(z.string()).describe('Its name, yours to tell monitors apart.'),
  urls: asSent(z.array(z.string())).optional().describe('The pages each run reads (or crawl_url).'),
  crawl_url: asSent(z.string())
    .optional()
    .describe('Or a site: each run crawls from this page (at most crawl_limit pages).'),
  crawl_limit: asSent(z.number().int())
    .optional()
    .describe('The most pages a crawl run reads (default 100).'),
  schedule: asSent(z.string())
    .optional()
    .describe('When it runs: a cron expression in UTC, such as "0 * * * *" (or every_s).'),
  every_s: asSent(z.number().int()).optional().describe('Or: seconds between runs.'),
  format: asSent(z.enum(FORMATS)).optional().describe("The pages' content format (default markdown)."),
  webhook_url: asSent(z.string())
    .optional()
    .describe('Where page.changed, page.removed and monitor.run.done are posted (Standard Webhooks).'),
  webhook_secret: asSent(z.string()).optional().describe("The webhook's signing secret (whsec_…)."),
  notify: asSent(z.enum(['changed', 'always']))
    .optional()
    .describe('changed (default): the webhook hears of runs that found a change; always: of every run.'),
};
export const searchShape = {
  query: asSent(z.string()).describe(
    'Words to find in the pages your jobs fetched (batches, crawls, monitor runs): a page has every one; English words match their other forms.',
  ),
  jobs: asSent(z.array(z.string())).optional().describe('Only pages of these jobs.'),
  site: asSent(z.string()).optional().describe('Only pages of this host (or a host under it).'),
  limit: asSent(z.number().int()).optional().describe('At most this many hits (default 10, at most 100).'),
};
export const monitorIdShape = {
  id: z.string().describe("The monitor's id, from monitor_create or monitor_list."),
};
export const idShape = { id: z.string().describe("The job's id, from batch_submit or crawl.") };
export const resultsShape = {
  ...idShape,
  cursor: z.number().int().min(-1).optional().describe("A previous answer's next (default: from the start)."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(RESULTS_MAX_LIMIT)
    .optional()
    .describe('At most this many results (default 10).'),
};

export type Args<S extends z.ZodRawShape> = z.infer<z.ZodObject<S>>;

/** Without its undefined fields (the services tell a field left out from one set). */
export function strip(o: Body): Body {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** The page options of a batch's or a crawl's arguments, as the REST API's `options`. */
function optionsOf(a: Partial<Record<keyof typeof pageOptions, unknown>>): Body {
  const keys = Object.keys(pageOptions) as (keyof typeof pageOptions)[];
  return strip(Object.fromEntries(keys.map((k) => [k, a[k]])));
}

/** The body of POST /v1/fetch (max_chars and offset are the tool's own). */
export function fetchBody(a: Omit<Args<typeof fetchShape>, 'max_chars' | 'max_tokens' | 'offset'>): Body {
  const { changes, ...rest } = a;
  // The content stays in `format`; the changes come beside it. An agent is told the tokens.
  const body = { ...rest, tokens: true };
  return strip(changes ? { ...body, format: rest.format ?? 'markdown', formats: ['changes'] } : body);
}

/** The body of POST /v1/search. */
export const searchBody = (a: Args<typeof searchShape>): Body => strip(a);

/** The body of POST /v1/monitors. */
export function monitorBody(a: Args<typeof monitorShape>): Body {
  const crawl = a.crawl_url === undefined ? undefined : strip({ url: a.crawl_url, limit: a.crawl_limit });
  const webhook =
    a.webhook_url === undefined && a.webhook_secret === undefined
      ? undefined
      : { url: a.webhook_url, secret: a.webhook_secret };
  const options = a.format === undefined ? undefined : { format: a.format };
  return strip({
    name: a.name,
    urls: a.urls,
    crawl: crawl && options ? { ...crawl, options } : crawl,
    schedule: a.schedule,
    every_s: a.every_s,
    options: crawl ? undefined : options,
    webhook,
    notify: a.notify,
  });
}

/** The body of POST /v1/batch: each URL a target, the page options the job's `options`. */
export function batchBody(a: Args<typeof batchShape>): Body {
  const targets = Array.isArray(a.urls) ? (a.urls as unknown[]).map((url) => ({ url })) : a.urls;
  return strip({ targets, options: optionsOf(a), ttl_s: a.ttl_s });
}

/** The body of POST /v1/crawl: the page options are the crawl's `options`. */
export function crawlBody(a: Args<typeof crawlShape>): Body {
  const { url, limit, max_depth, path_prefix, include_paths, exclude_paths, sitemap, llms_txt } = a;
  return strip({
    url,
    limit,
    max_depth,
    path_prefix,
    include_paths,
    exclude_paths,
    sitemap,
    llms_txt,
    options: optionsOf(a),
  });
}

/** The body of POST /v1/map. */
export const mapBody = (a: Args<typeof mapShape>): Body => strip(a);

/**
 * sift's field names in a refusal, as a tool names them: a batch's `targets.3.url` is `urls.3`, a
 * page option is not under `options.`, the results' `after` is the `cursor`.
 */
export const TOOL_NAMES: Record<string, [RegExp, string][]> = {
  batch_submit: [
    [/\btargets\.(\d+)\.url\b/g, 'urls.$1'],
    [/\btargets\b/g, 'urls'],
    [/\boptions\.(?=\w)/g, ''],
  ],
  crawl: [[/\boptions\.(?=\w)/g, '']],
  batch_results: [[/\bafter\b/g, 'cursor']],
};
