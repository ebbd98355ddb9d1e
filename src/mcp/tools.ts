// The MCP tools, written once over a port: in the server the port is sift's services bound to the
// caller (service-port.ts), in `sift mcp` it is sift's REST API (http-port.ts). This file loads no
// server code: the command line's stdio server loads it too.
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/** What the tools ask of sift; each answer is plain JSON. */
export interface SiftPort {
  /** The page's envelope as JSON text, its content cut to one page (see pageOfContent). */
  fetchPage(args: FetchArgs, offset: number, maxChars: number): Promise<string>;
  batchSubmit(args: BatchSubmitArgs): Promise<unknown>;
  batchStatus(id: string): Promise<unknown>;
  batchResults(id: string, cursor: number, limit: number): Promise<ResultsPage>;
  crawl(args: CrawlArgs): Promise<unknown>;
  map(args: MapArgs): Promise<unknown>;
  cancel(id: string): Promise<unknown>;
}

export interface ResultsPage {
  results: ({ idx: number; result?: { content?: string } | null } & Record<string, unknown>)[];
  next: number | null;
}

/** A tool's content is at most this many characters by default (about 20k tokens). */
export const DEFAULT_MAX_CHARS = 80_000;
/** A batch_results answer stays under about this much JSON (agent clients cap a result at 25k tokens). */
export const RESULTS_MAX_CHARS = 80_000;
export const RESULTS_MAX_LIMIT = 20;

const FORMATS = ['markdown', 'text', 'html'] as const;

/** Fetch options a batch or a crawl applies to each page, as the REST API names them. */
const pageOptions = {
  format: z.enum(FORMATS).optional().describe("The content's format (default markdown)."),
  include_selectors: z.array(z.string()).optional().describe('CSS selectors: keep only these parts.'),
  exclude_selectors: z.array(z.string()).optional().describe('CSS selectors: drop these parts.'),
  links: z.boolean().optional().describe("Also the main content's links."),
  render: z
    .enum(['never', 'auto', 'always'])
    .optional()
    .describe('Run a browser: never, auto (when the page needs it), always.'),
};

const fetchShape = {
  url: z.string().describe('An absolute http or https URL.'),
  ...pageOptions,
  max_chars: z
    .number()
    .int()
    .min(1000)
    .max(1_000_000)
    .optional()
    .describe(`At most this many characters of content (default ${DEFAULT_MAX_CHARS}).`),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Where the content starts: a previous answer's next_offset."),
};
const batchShape = {
  urls: z.array(z.string()).min(1).describe('The URLs to fetch, each a target of one job.'),
  ...pageOptions,
  ttl_s: z.number().int().min(1).optional().describe('Keep the job this many seconds after it ends.'),
};
const crawlShape = {
  url: z.string().describe('The page to start from.'),
  limit: z.number().int().min(1).optional().describe('At most this many pages (default 100).'),
  max_depth: z.number().int().min(0).optional().describe('At most this many hops from the seed (default 3).'),
  include_paths: z.array(z.string()).optional().describe('Path globs a page must match.'),
  exclude_paths: z.array(z.string()).optional().describe('Path globs that leave a page out.'),
  sitemap: z
    .enum(['include', 'skip', 'only'])
    .optional()
    .describe("The site's sitemaps: include, skip, only."),
  ...pageOptions,
};
const mapShape = {
  url: z.string().describe("The site's page to map from."),
  limit: z.number().int().min(1).max(30_000).optional().describe('At most this many URLs (default 5000).'),
  sitemap: z.enum(['include', 'skip', 'only']).optional(),
  include_paths: z.array(z.string()).optional(),
  exclude_paths: z.array(z.string()).optional(),
};
const idShape = { id: z.string().describe("The job's id, from batch_submit or crawl.") };
const resultsShape = {
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

export type FetchArgs = Omit<z.infer<z.ZodObject<typeof fetchShape>>, 'max_chars' | 'offset'>;
export type BatchSubmitArgs = z.infer<z.ZodObject<typeof batchShape>>;
export type CrawlArgs = z.infer<z.ZodObject<typeof crawlShape>>;
export type MapArgs = z.infer<z.ZodObject<typeof mapShape>>;

/** The page options of a batch's or a crawl's arguments, as the REST API's `options`. */
export function optionsOf(a: Partial<Record<keyof typeof pageOptions, unknown>>): Record<string, unknown> {
  const keys = Object.keys(pageOptions) as (keyof typeof pageOptions)[];
  return Object.fromEntries(keys.filter((k) => a[k] !== undefined).map((k) => [k, a[k]]));
}

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };

const textResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });

/**
 * A sift error (SiftError, or the REST API's error envelope) as the tool's answer: `isError` and
 * `{code, message, hint}`, never a protocol error. Any other fault is told by its code only
 * (internal, or extraction_failed); its details go to `onFault` (the log). SiftError is recognised
 * by its shape: importing it would load the server's error table into `sift mcp`.
 */
export function errorResult(err: unknown, onFault?: (err: unknown) => void): ToolResult {
  let body: { code: string; message: string; hint: string };
  if (isSiftError(err)) body = { code: err.code, message: err.message, hint: err.hint };
  else {
    onFault?.(err);
    const code =
      (err as { code?: unknown } | null)?.code === 'extraction_failed' ? 'extraction_failed' : 'internal';
    body = {
      code,
      message: 'sift failed on this call; the details are in its log',
      hint: 'try again, or report it',
    };
  }
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

function isSiftError(e: unknown): e is { code: string; message: string; hint: string } {
  const f = e as { code?: unknown; message?: unknown; hint?: unknown } | null;
  return typeof f?.code === 'string' && typeof f?.message === 'string' && typeof f?.hint === 'string';
}

/** Where a slice of at most `max` characters from `offset` ends, never between a surrogate pair. */
export function sliceEnd(s: string, offset: number, max: number): number {
  let end = Math.min(s.length, offset + max);
  if (end < s.length && end > offset + 1) {
    const c = s.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end--;
  }
  return end;
}

/** The envelope with its content cut to one page: `offset`, `total_chars` and `next_offset` (null at the end). */
export function pageOfContent<T extends { content: string }>(env: T, offset: number, max: number) {
  const total = env.content.length;
  const from = Math.min(offset, total);
  const end = sliceEnd(env.content, from, max);
  return {
    ...env,
    content: env.content.slice(from, end),
    offset: from,
    total_chars: total,
    next_offset: end < total ? end : null,
  };
}

/**
 * A results page held under RESULTS_MAX_CHARS of JSON: results after the budget wait for `next`;
 * a first result larger than the budget alone has its content cut (`content_truncated`), and the
 * fetch tool pages it whole.
 */
export function boundResults(page: ResultsPage, max = RESULTS_MAX_CHARS): ResultsPage {
  const kept: ResultsPage['results'] = [];
  let total = 0;
  for (const r of page.results) {
    const size = JSON.stringify(r).length;
    if (kept.length > 0 && total + size > max) {
      return { results: kept, next: kept[kept.length - 1].idx };
    }
    if (size > max && r.result && typeof r.result.content === 'string') {
      const room = Math.max(0, r.result.content.length - (size - max) - 200);
      const end = sliceEnd(r.result.content, 0, room);
      kept.push({
        ...r,
        result: { ...r.result, content: r.result.content.slice(0, end) },
        content_truncated: true,
      });
    } else kept.push(r);
    total += size;
  }
  return { results: kept, next: page.next };
}

const READ = { readOnlyHint: true, openWorldHint: true } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: true } as const;

/**
 * Registers the seven tools on a server, each calling the port `portOf` gives when the call comes
 * (a server kept for many requests serves each with its caller's port); faults not sift's errors go
 * to `onFault`.
 */
export function registerTools(
  server: McpServer,
  portOf: () => SiftPort,
  onFault?: (err: unknown) => void,
): void {
  const run = async (work: (port: SiftPort) => Promise<unknown>, asText = false): Promise<ToolResult> => {
    try {
      const out = await work(portOf());
      return textResult(asText ? (out as string) : JSON.stringify(out));
    } catch (err) {
      return errorResult(err, onFault);
    }
  };
  server.registerTool(
    'fetch',
    {
      description:
        'Fetch one URL and return its main content (markdown by default). Long content comes a page of max_chars at a time: call again with offset = next_offset until next_offset is null.',
      inputSchema: fetchShape,
      annotations: { title: 'Fetch a page', ...READ },
    },
    ({ max_chars, offset, ...args }) =>
      run((port) => port.fetchPage(args, offset ?? 0, max_chars ?? DEFAULT_MAX_CHARS), true),
  );
  server.registerTool(
    'batch_submit',
    {
      description:
        'Start a job that fetches many URLs; returns the job (its id). Read it with batch_status and batch_results.',
      inputSchema: batchShape,
      annotations: { title: 'Submit a batch', ...WRITE },
    },
    (args) => run((port) => port.batchSubmit(args)),
  );
  server.registerTool(
    'batch_status',
    {
      description: "A batch's or a crawl's status and counts.",
      inputSchema: idShape,
      annotations: { title: 'Job status', ...READ, openWorldHint: false },
    },
    ({ id }) => run((port) => port.batchStatus(id)),
  );
  server.registerTool(
    'batch_results',
    {
      description:
        "A job's results in order, a bounded page at a time: pass the answer's next as cursor until next is null.",
      inputSchema: resultsShape,
      annotations: { title: 'Job results', ...READ, openWorldHint: false },
    },
    ({ id, cursor, limit }) =>
      run(async (port) => boundResults(await port.batchResults(id, cursor ?? -1, limit ?? 10))),
  );
  server.registerTool(
    'crawl',
    {
      description:
        'Start a job that reads a site from url, following its links and sitemaps within the limits; returns the job. Read it with batch_status and batch_results.',
      inputSchema: crawlShape,
      annotations: { title: 'Crawl a site', ...WRITE },
    },
    (args) => run((port) => port.crawl(args)),
  );
  server.registerTool(
    'map',
    {
      description: "A site's URLs (the page's links and its sitemaps' entries) without reading the pages.",
      inputSchema: mapShape,
      annotations: { title: 'Map a site', ...READ },
    },
    (args) => run((port) => port.map(args)),
  );
  server.registerTool(
    'cancel',
    {
      description: 'Stop a live batch or crawl; its unstarted targets never run.',
      inputSchema: idShape,
      annotations: {
        title: 'Cancel a job',
        readOnlyHint: false,
        destructiveHint: true,
        openWorldHint: false,
      },
    },
    ({ id }) => run((port) => port.cancel(id)),
  );
}
