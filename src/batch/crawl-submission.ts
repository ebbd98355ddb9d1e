import { invalidRequest } from '../common/errors';
import { canonicalUrl } from '../crawl/canonical';
import { WILDCARD_HINT, globListProblem, globProblem } from '../crawl/scope';
import {
  DEFAULT_CRAWL_LIMIT,
  DEFAULT_MAX_DEPTH,
  MAX_DEPTH,
  MAX_GLOBS,
  type CrawlSpec,
  type SitemapMode,
} from '../crawl/spec';
import { renderModeOf, type Caller, type RenderAsk } from '../pages/caller-policy';
import { fingerprintOf } from './canonical';
import type { JobDraft } from './job-creation';
import { jobBasics, urlProblem, type DraftLimits, type JobAsk } from './submission';

/** POST /v1/crawl's body, as validated by its DTO. */
export interface CrawlRequest extends JobAsk {
  url: string;
  limit?: number;
  max_depth?: number;
  include_paths?: string[];
  exclude_paths?: string[];
  allow_subdomains?: boolean;
  allow_external?: boolean;
  ignore_query?: boolean;
  sitemap?: SitemapMode;
}

/**
 * The job a crawl request makes: its seed as the one target (depth 0), and what it asked kept
 * with the job. `limit` is held to the caller's class target limit (400 past it), globs are
 * checked, and everything every job checks is checked as for a batch.
 */
export function draftCrawl(caller: Caller, req: CrawlRequest, o: DraftLimits): JobDraft {
  const problem = urlProblem(req.url);
  if (problem) throw invalidRequest(`url ${problem}`, 'send the absolute http(s) URL to start from');
  const limit = req.limit ?? Math.min(DEFAULT_CRAWL_LIMIT, o.maxTargets);
  if (limit > o.maxTargets) {
    throw invalidRequest(
      `limit ${limit} is over the ${o.maxTargets} pages a ${caller.callerClass} caller may crawl in one job`,
      `ask for at most ${o.maxTargets}`,
    );
  }
  const maxDepth = req.max_depth ?? DEFAULT_MAX_DEPTH;
  if (maxDepth > MAX_DEPTH)
    throw invalidRequest(`max_depth must be at most ${MAX_DEPTH}`, 'ask for fewer hops');
  for (const field of ['include_paths', 'exclude_paths'] as const) {
    const globs = req[field] ?? [];
    if (globs.length > MAX_GLOBS) {
      throw invalidRequest(
        `${field} has ${globs.length} globs, over ${MAX_GLOBS}`,
        'merge them with ** or {a,b}',
      );
    }
    for (const [i, g] of globs.entries()) {
      const bad = globProblem(g);
      if (bad) throw invalidRequest(`${field}.${i} ${bad}`, 'write a glob on the path, such as /docs/**');
    }
  }
  const tooMuch = globListProblem(req.include_paths ?? [], req.exclude_paths ?? []);
  if (tooMuch) throw invalidRequest(tooMuch, WILDCARD_HINT);
  const spec: CrawlSpec = {
    seed: req.url,
    limit,
    max_depth: maxDepth,
    include_paths: req.include_paths ?? [],
    exclude_paths: req.exclude_paths ?? [],
    allow_subdomains: req.allow_subdomains ?? false,
    allow_external: req.allow_external ?? false,
    ignore_query: req.ignore_query ?? false,
    sitemap: req.sitemap ?? 'include',
    options: req.options ?? {},
  };
  renderModeOf((req.options ?? {}) as RenderAsk, 'options: ');
  const basics = jobBasics(caller, req, o, [req.options]);
  const { options, ...asked } = spec;
  return {
    caller,
    ...basics,
    fingerprint: fingerprintOf({
      crawl: asked,
      options,
      on_restart: basics.onRestart,
      webhook: basics.webhook ?? null,
      ttl_s: req.ttl_s ?? null,
    }),
    crawl: spec,
    targets: [
      {
        url: req.url,
        options: JSON.stringify(options),
        depth: 0,
        canonical: canonicalUrl(req.url, { ignoreQuery: spec.ignore_query }) ?? req.url,
      },
    ],
  };
}
