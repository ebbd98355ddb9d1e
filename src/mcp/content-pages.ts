// What the tools answer with: long content a page at a time (by characters, and by tokens when
// asked), a job's results within a budget, and each tool's output schema. Loads no server code.
import { z } from 'zod';
import { cutToTokens } from '../common/tokens';

export interface ResultsPage {
  results: ({ idx: number; result?: { content?: string } | null } & Record<string, unknown>)[];
  next: number | null;
}

/** A fetch tool's answer: the envelope with one page of its content. */
export type ContentPage = Record<string, unknown> & {
  content: string;
  offset: number;
  total_chars: number;
  next_offset: number | null;
};

/** A batch_results answer stays under about this much JSON (agent clients cap a result at 25k tokens). */
export const RESULTS_MAX_CHARS = 80_000;

/** Where a slice of at most `max` characters from `offset` ends, never between a surrogate pair. */
export function sliceEnd(s: string, offset: number, max: number): number {
  let end = Math.min(s.length, offset + max);
  if (end < s.length && end > offset + 1) {
    const c = s.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end--;
  }
  return end;
}

/**
 * The envelope with its content cut to one page of at most `max` characters and, when given,
 * `maxTokens` tokens: `offset`, `total_chars` and `next_offset` (null at the end).
 */
export function pageOfContent<T extends { content: string }>(
  env: T,
  offset: number,
  max: number,
  maxTokens?: number,
) {
  const total = env.content.length;
  const from = Math.min(offset, total);
  let end = sliceEnd(env.content, from, max);
  if (maxTokens !== undefined && end > from) {
    const cut = cutToTokens(env.content.slice(from, end), maxTokens);
    // Each page moves on, by a whole character at least.
    if (cut.truncated) end = from + (cut.text.length || sliceEnd(env.content, from, 2) - from);
  }
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

/** A field sift answers, described for the model; more fields may come (each object is loose). */
const JOB = z.looseObject({
  id: z.string().describe("The job's id."),
  status: z.string().describe('queued, running, done, failed or cancelled.'),
  targets_total: z.number(),
  targets_done: z.number(),
});

/**
 * Each tool's outputSchema: the shape of its `structuredContent` (its text content is the same
 * answer as JSON, or for fetch the content itself). Loose: what sift adds later still validates.
 */
export const OUTPUTS = {
  fetch: z.looseObject({
    url: z.string(),
    final_url: z.string(),
    status: z.number().describe('The upstream HTTP status.'),
    title: z.string(),
    content: z.string().describe('This page of the content: the text content of the answer.'),
    truncated: z.boolean(),
    verdict: z.string().describe('ok, empty, challenge, not_found or error_page.'),
    metadata: z.looseObject({
      tokens: z.number().optional().describe("The whole content's tokens (o200k_base)."),
    }),
    offset: z.number().describe('Where this page of the content starts, in characters.'),
    total_chars: z.number(),
    next_offset: z.number().nullable().describe('Where the next page starts; null at the end.'),
  }),
  job: JOB,
  results: z.looseObject({
    results: z.array(z.looseObject({ idx: z.number(), result: z.looseObject({}).nullable().optional() })),
    next: z.number().nullable().describe('The cursor of the next page; null at the end.'),
  }),
  map: z.looseObject({ links: z.array(z.looseObject({ url: z.string() })) }),
  monitor: z.looseObject({ id: z.string(), name: z.string() }),
  monitors: z.looseObject({ monitors: z.array(z.looseObject({ id: z.string() })) }),
  runs: z.looseObject({ runs: z.array(JOB) }),
  search: z.looseObject({
    hits: z.array(
      z.looseObject({
        url: z.string(),
        title: z.string(),
        snippet: z.string(),
        score: z.number(),
        job_id: z.string().nullable(),
        idx: z.number().nullable(),
      }),
    ),
  }),
};
