// The MCP tools, written once over a port: in the server the port is sift's services bound to the
// caller (service-port.ts), in `sift mcp` it is sift's REST API (http-port.ts). This file loads no
// server code: the command line's stdio server loads it too.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { boundResults, OUTPUTS, type ContentPage, type ResultsPage } from './content-pages';
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
  searchBody,
  searchShape,
  TOOL_NAMES,
  type Body,
} from './tool-args';
import { fileOf, parseBody, parseShape, type FileSent } from './parse-args';
import { errorResult, type ToolResult } from './tool-errors';

export { DEFAULT_MAX_CHARS, RESULTS_MAX_LIMIT, type Body } from './tool-args';
export type { FileSent } from './parse-args';
export {
  boundResults,
  pageOfContent,
  RESULTS_MAX_CHARS,
  sliceEnd,
  type ContentPage,
  type ResultsPage,
} from './content-pages';

/**
 * What the tools ask of sift; each answer is plain JSON. A tool hands its arguments on as the body
 * of the REST route that does the same (tool-args.ts): the port has it checked by that route's DTO,
 * in process or by calling the route.
 */
export interface SiftPort {
  /** The page's envelope, its content cut to one page (see pageOfContent). */
  fetchPage(body: Body, offset: number, maxChars: number, maxTokens?: number): Promise<ContentPage>;
  /** A file read as POST /v1/parse reads it (`body` its options), its content cut to one page. */
  parsePage(
    file: FileSent,
    body: Body,
    offset: number,
    maxChars: number,
    maxTokens?: number,
  ): Promise<ContentPage>;
  batchSubmit(body: Body): Promise<unknown>;
  batchStatus(id: string): Promise<unknown>;
  batchResults(id: string, cursor: number, limit: number): Promise<ResultsPage>;
  crawl(body: Body): Promise<unknown>;
  map(body: Body): Promise<unknown>;
  cancel(id: string): Promise<unknown>;
  monitorCreate(body: Body): Promise<unknown>;
  monitorList(): Promise<unknown>;
  monitorRuns(id: string): Promise<unknown>;
  search(body: Body): Promise<unknown>;
}

/**
 * Each tool's arguments as one object schema, made once for every server: the SDK would make one
 * per server from a bare shape, and each would compile and warm up its own checks (sift keeps up
 * to 64 servers, so a call met a cold one most of the time).
 */
const INPUTS = {
  fetch: z.object(fetchShape),
  parse: z.object(parseShape),
  batch: z.object(batchShape),
  id: z.object(idShape),
  results: z.object(resultsShape),
  crawl: z.object(crawlShape),
  map: z.object(mapShape),
  monitor: z.object(monitorShape),
  monitorId: z.object(monitorIdShape),
  search: z.object(searchShape),
  none: z.object({}),
};

const READ = { readOnlyHint: true, openWorldHint: true } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: true } as const;

/**
 * Registers the tools on a server, each calling the port `portOf` gives when the call comes
 * (a server kept for many requests serves each with its caller's port); faults not sift's errors go
 * to `onFault`.
 */
export function registerTools(
  server: McpServer,
  portOf: () => SiftPort,
  onFault?: (err: unknown) => void,
): void {
  // The answer in structuredContent (each tool's outputSchema says its shape), and as text: the
  // content itself for fetch, the JSON for the others (clients that read no structuredContent).
  const run = async (
    tool: string,
    work: (port: SiftPort) => Promise<unknown>,
    text: (out: Record<string, unknown>) => string = (out) => JSON.stringify(out),
  ): Promise<ToolResult> => {
    try {
      const out = (await work(portOf())) as Record<string, unknown>;
      return { content: [{ type: 'text', text: text(out) }], structuredContent: out };
    } catch (err) {
      return errorResult(err, onFault, TOOL_NAMES[tool]);
    }
  };
  server.registerTool(
    'fetch',
    {
      description:
        'Fetch one URL and return its main content (markdown by default) as the text, the rest of the page (title, status, verdict, metadata with its tokens) beside it. Long content comes a page of max_chars (or max_tokens) at a time: call again with offset = next_offset until next_offset is null.',
      inputSchema: INPUTS.fetch,
      outputSchema: OUTPUTS.fetch,
      annotations: { title: 'Fetch a page', ...READ },
    },
    ({ max_chars, max_tokens, offset, ...args }) =>
      run(
        'fetch',
        (port) => port.fetchPage(fetchBody(args), offset ?? 0, max_chars ?? DEFAULT_MAX_CHARS, max_tokens),
        (page) => page.content as string,
      ),
  );
  server.registerTool(
    'parse',
    {
      description:
        'Read a file you have (a PDF, an Office, OpenDocument or EPUB file, RTF, CSV, html, text, or an image by OCR), sent in base64, and return its content (markdown by default) as the text, with its title and metadata beside it, as fetch does. Long content comes a page at a time: call again with the same file and offset = next_offset.',
      inputSchema: INPUTS.parse,
      outputSchema: OUTPUTS.fetch,
      annotations: { title: 'Read a file', readOnlyHint: true, openWorldHint: false },
    },
    ({ data, filename, content_type, max_chars, max_tokens, offset, ...options }) =>
      run(
        'parse',
        (port) =>
          port.parsePage(
            fileOf({ data, filename, content_type }),
            parseBody(options),
            offset ?? 0,
            max_chars ?? DEFAULT_MAX_CHARS,
            max_tokens,
          ),
        (page) => page.content as string,
      ),
  );
  server.registerTool(
    'batch_submit',
    {
      description:
        'Start a job that fetches many URLs; returns the job (its id). Read it with batch_status and batch_results.',
      inputSchema: INPUTS.batch,
      outputSchema: OUTPUTS.job,
      annotations: { title: 'Submit a batch', ...WRITE },
    },
    (args) => run('batch_submit', (port) => port.batchSubmit(batchBody(args))),
  );
  server.registerTool(
    'batch_status',
    {
      description: "A batch's or a crawl's status and counts.",
      inputSchema: INPUTS.id,
      outputSchema: OUTPUTS.job,
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
      outputSchema: OUTPUTS.results,
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
      outputSchema: OUTPUTS.job,
      annotations: { title: 'Crawl a site', ...WRITE },
    },
    (args) => run('crawl', (port) => port.crawl(crawlBody(args))),
  );
  server.registerTool(
    'map',
    {
      description: "A site's URLs (the page's links and its sitemaps' entries) without reading the pages.",
      inputSchema: INPUTS.map,
      outputSchema: OUTPUTS.map,
      annotations: { title: 'Map a site', ...READ },
    },
    (args) => run('map', (port) => port.map(mapBody(args))),
  );
  server.registerTool(
    'cancel',
    {
      description: 'Stop a live batch or crawl; its unstarted targets never run.',
      inputSchema: INPUTS.id,
      outputSchema: OUTPUTS.job,
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
      outputSchema: OUTPUTS.monitor,
      annotations: { title: 'Create a monitor', ...WRITE },
    },
    (args) => run('monitor_create', (port) => port.monitorCreate(monitorBody(args))),
  );
  server.registerTool(
    'monitor_list',
    {
      description: 'Your monitors: their schedules, next run, runs so far and last run.',
      inputSchema: INPUTS.none,
      outputSchema: OUTPUTS.monitors,
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
      outputSchema: OUTPUTS.runs,
      annotations: { title: 'Monitor runs', ...READ, openWorldHint: false },
    },
    ({ id }) => run('monitor_runs', (port) => port.monitorRuns(id)),
  );
  server.registerTool(
    'search',
    {
      description:
        'Find again pages your jobs fetched (batches, crawls, monitor runs) by their words, best first: each hit its url, title, a snippet, its score, and the job_id and idx of its result (read it whole with batch_results).',
      inputSchema: INPUTS.search,
      outputSchema: OUTPUTS.search,
      annotations: { title: 'Search fetched pages', ...READ, openWorldHint: false },
    },
    (args) => run('search', (port) => port.search(searchBody(args))),
  );
}
