// The MCP tools, written once over a port: in the server the port is sift's services bound to the
// caller (service-port.ts), in `sift mcp` it is sift's REST API (http-port.ts). This file loads no
// server code: the command line's stdio server loads it too.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  batchBody,
  batchShape,
  crawlBody,
  crawlShape,
  DEFAULT_MAX_CHARS,
  fetchBody,
  fetchShape,
  idShape,
  mapBody,
  mapShape,
  monitorBody,
  monitorIdShape,
  monitorShape,
  resultsShape,
  TOOL_NAMES,
  type Body,
} from './tool-args';

export { DEFAULT_MAX_CHARS, RESULTS_MAX_LIMIT, type Body } from './tool-args';

/**
 * What the tools ask of sift; each answer is plain JSON. A tool hands its arguments on as the body
 * of the REST route that does the same (tool-args.ts): the port has it checked by that route's DTO,
 * in process or by calling the route.
 */
export interface SiftPort {
  /** The page's envelope as JSON text, its content cut to one page (see pageOfContent). */
  fetchPage(body: Body, offset: number, maxChars: number): Promise<string>;
  batchSubmit(body: Body): Promise<unknown>;
  batchStatus(id: string): Promise<unknown>;
  batchResults(id: string, cursor: number, limit: number): Promise<ResultsPage>;
  crawl(body: Body): Promise<unknown>;
  map(body: Body): Promise<unknown>;
  cancel(id: string): Promise<unknown>;
  monitorCreate(body: Body): Promise<unknown>;
  monitorList(): Promise<unknown>;
  monitorRuns(id: string): Promise<unknown>;
}

export interface ResultsPage {
  results: ({ idx: number; result?: { content?: string } | null } & Record<string, unknown>)[];
  next: number | null;
}

/** A batch_results answer stays under about this much JSON (agent clients cap a result at 25k tokens). */
export const RESULTS_MAX_CHARS = 80_000;

/**
 * Each tool's arguments as one object schema, made once for every server: the SDK would make one
 * per server from a bare shape, and each would compile and warm up its own checks (sift keeps up
 * to 64 servers, so a call met a cold one most of the time).
 */
const INPUTS = {
  fetch: z.object(fetchShape),
  batch: z.object(batchShape),
  id: z.object(idShape),
  results: z.object(resultsShape),
  crawl: z.object(crawlShape),
  map: z.object(mapShape),
  monitor: z.object(monitorShape),
  monitorId: z.object(monitorIdShape),
  none: z.object({}),
};

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };

const textResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });

/**
 * A sift error (SiftError, or the REST API's error envelope) as the tool's answer: `isError` and
 * `{code, message, hint}`, never a protocol error. Any other fault is told by its code only
 * (internal, or extraction_failed); its details go to `onFault` (the log). SiftError is recognised
 * by its shape: importing it would load the server's error table into `sift mcp`. A refusal names
 * the fields by `names` (the tool's names for sift's).
 */
export function errorResult(
  err: unknown,
  onFault?: (err: unknown) => void,
  names: [RegExp, string][] = [],
): ToolResult {
  let body: { code: string; message: string; hint: string };
  if (isSiftError(err)) {
    let message = err.message;
    if (err.code === 'invalid_request') for (const [re, to] of names) message = message.replace(re, to);
    body = { code: err.code, message, hint: err.hint };
  } else {
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
  const run = async (
    tool: string,
    work: (port: SiftPort) => Promise<unknown>,
    asText = false,
  ): Promise<ToolResult> => {
    try {
      const out = await work(portOf());
      return textResult(asText ? (out as string) : JSON.stringify(out));
    } catch (err) {
      return errorResult(err, onFault, TOOL_NAMES[tool]);
    }
  };
  server.registerTool(
    'fetch',
    {
      description:
        'Fetch one URL and return its main content (markdown by default). Long content comes a page of max_chars at a time: call again with offset = next_offset until next_offset is null.',
      inputSchema: INPUTS.fetch,
      annotations: { title: 'Fetch a page', ...READ },
    },
    ({ max_chars, offset, ...args }) =>
      run(
        'fetch',
        (port) => port.fetchPage(fetchBody(args), offset ?? 0, max_chars ?? DEFAULT_MAX_CHARS),
        true,
      ),
  );
  server.registerTool(
    'batch_submit',
    {
      description:
        'Start a job that fetches many URLs; returns the job (its id). Read it with batch_status and batch_results.',
      inputSchema: INPUTS.batch,
      annotations: { title: 'Submit a batch', ...WRITE },
    },
    (args) => run('batch_submit', (port) => port.batchSubmit(batchBody(args))),
  );
  server.registerTool(
    'batch_status',
    {
      description: "A batch's or a crawl's status and counts.",
      inputSchema: INPUTS.id,
      annotations: { title: 'Job status', ...READ, openWorldHint: false },
    },
    ({ id }) => run('batch_status', (port) => port.batchStatus(id)),
  );
  server.registerTool(
    'batch_results',
    {
      description:
        "A job's results in order, a bounded page at a time: pass the answer's next as cursor until next is null.",
      inputSchema: INPUTS.results,
      annotations: { title: 'Job results', ...READ, openWorldHint: false },
    },
    ({ id, cursor, limit }) =>
      run('batch_results', async (port) =>
        boundResults(await port.batchResults(id, cursor ?? -1, limit ?? 10)),
      ),
  );
  server.registerTool(
    'crawl',
    {
      description:
        'Start a job that reads a site from url, following its links and sitemaps within the limits; returns the job. Read it with batch_status and batch_results.',
      inputSchema: INPUTS.crawl,
      annotations: { title: 'Crawl a site', ...WRITE },
    },
    (args) => run('crawl', (port) => port.crawl(crawlBody(args))),
  );
  server.registerTool(
    'map',
    {
      description: "A site's URLs (the page's links and its sitemaps' entries) without reading the pages.",
      inputSchema: INPUTS.map,
      annotations: { title: 'Map a site', ...READ },
    },
    (args) => run('map', (port) => port.map(mapBody(args))),
  );
  server.registerTool(
    'cancel',
    {
      description: 'Stop a live batch or crawl; its unstarted targets never run.',
      inputSchema: INPUTS.id,
      annotations: {
        title: 'Cancel a job',
        readOnlyHint: false,
        destructiveHint: true,
        openWorldHint: false,
      },
    },
    ({ id }) => run('cancel', (port) => port.cancel(id)),
  );
  server.registerTool(
    'monitor_create',
    {
      description:
        'Watch pages (urls) or a site (crawl_url) on a schedule: each run reads them again, asking the site whether they changed, and the pages that changed or went are reported (page.changed, page.removed) with a diff, to the webhook and in the run. Returns the monitor.',
      inputSchema: INPUTS.monitor,
      annotations: { title: 'Create a monitor', ...WRITE },
    },
    (args) => run('monitor_create', (port) => port.monitorCreate(monitorBody(args))),
  );
  server.registerTool(
    'monitor_list',
    {
      description: 'Your monitors: their schedules, next run, runs so far and last run.',
      inputSchema: INPUTS.none,
      annotations: { title: 'List monitors', ...READ, openWorldHint: false },
    },
    () => run('monitor_list', (port) => port.monitorList()),
  );
  server.registerTool(
    'monitor_runs',
    {
      description:
        "A monitor's last runs, newest first: each a job; read its results (each page's changes) with batch_results.",
      inputSchema: INPUTS.monitorId,
      annotations: { title: 'Monitor runs', ...READ, openWorldHint: false },
    },
    ({ id }) => run('monitor_runs', (port) => port.monitorRuns(id)),
  );
}
