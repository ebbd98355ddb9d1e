import { invalidRequest } from '../common/errors';
import { REGEX_HINT, regexListProblem, regexProblem } from './path-regex';
import { WILDCARD_HINT, globListProblem, globProblem } from './scope';
import {
  DEFAULT_CRAWL_LIMIT,
  DEFAULT_MAX_DEPTH,
  MAX_DEPTH,
  MAX_GLOBS,
  type CrawlSpec,
  type LlmsTxtMode,
  type SitemapMode,
} from './spec';

/** What a crawl request asks of the crawl itself (POST /v1/crawl's body beside what every job asks). */
export interface CrawlAsk {
  url: string;
  limit?: number;
  max_depth?: number;
  path_prefix?: string;
  include_paths?: string[];
  exclude_paths?: string[];
  include_regex?: string[];
  exclude_regex?: string[];
  allow_subdomains?: boolean;
  allow_external?: boolean;
  ignore_query?: boolean;
  sitemap?: SitemapMode;
  llms_txt?: LlmsTxtMode;
  options?: object;
}

/**
 * The crawl a request asks for, checked: `limit` held to the caller's class target limit (400
 * past it), the depth to MAX_DEPTH, the globs by number, shape and what they may cost. The URL is
 * checked by the caller first, as for every job's targets.
 */
export function crawlSpecFrom(req: CrawlAsk, caller: { callerClass: string; maxTargets: number }): CrawlSpec {
  const { maxTargets } = caller;
  const limit = req.limit ?? Math.min(DEFAULT_CRAWL_LIMIT, maxTargets);
  if (limit > maxTargets) {
    throw invalidRequest(
      `limit ${limit} is over the ${maxTargets} pages a ${caller.callerClass} caller may crawl in one job`,
      `ask for at most ${maxTargets}`,
    );
  }
  const maxDepth = req.max_depth ?? DEFAULT_MAX_DEPTH;
  if (maxDepth > MAX_DEPTH)
    throw invalidRequest(`max_depth must be at most ${MAX_DEPTH}`, 'ask for fewer hops');
  checkPathRules(req);
  if (req.path_prefix !== undefined && !req.path_prefix.startsWith('/'))
    throw invalidRequest('path_prefix must start with "/"', 'send a path such as /docs/guide/');
  return {
    seed: req.url,
    limit,
    max_depth: maxDepth,
    ...(req.path_prefix !== undefined ? { path_prefix: req.path_prefix } : {}),
    include_paths: req.include_paths ?? [],
    exclude_paths: req.exclude_paths ?? [],
    ...(req.include_regex?.length ? { include_regex: req.include_regex } : {}),
    ...(req.exclude_regex?.length ? { exclude_regex: req.exclude_regex } : {}),
    allow_subdomains: req.allow_subdomains ?? false,
    allow_external: req.allow_external ?? false,
    ignore_query: req.ignore_query ?? false,
    sitemap: req.sitemap ?? 'include',
    llms_txt: llmsTxtModeOf(req),
    options: req.options ?? {},
  };
}

/**
 * How a crawl or a map reads the site's llms.txt: not at all unless asked. Many sites list there
 * a markdown copy of each page (`/guide.md`), which a crawl would take as pages of their own; and
 * a crawl or a monitor asked before llms.txt was read keeps finding what it found. `only` with
 * `sitemap: only` would leave each of them nothing: 400.
 */
export function llmsTxtModeOf(req: { sitemap?: SitemapMode; llms_txt?: LlmsTxtMode }): LlmsTxtMode {
  const mode = req.llms_txt ?? 'skip';
  if (mode === 'only' && req.sitemap === 'only') {
    throw invalidRequest(
      'sitemap: only and llms_txt: only cannot both be asked',
      'ask for one of them only, or include for both',
    );
  }
  return mode;
}

/**
 * A crawl's or a map's path rules, checked: the globs and the regular expressions by number, each
 * by its shape, and together by what they may cost a path's reading.
 */
export function checkPathRules(
  req: Pick<CrawlAsk, 'include_paths' | 'exclude_paths' | 'include_regex' | 'exclude_regex'>,
): void {
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
  for (const field of ['include_regex', 'exclude_regex'] as const) {
    const patterns = req[field] ?? [];
    if (patterns.length > MAX_GLOBS)
      throw invalidRequest(`${field} has ${patterns.length} patterns, over ${MAX_GLOBS}`, REGEX_HINT);
    for (const [i, re] of patterns.entries()) {
      const bad = regexProblem(re);
      if (bad)
        throw invalidRequest(
          `${field}.${i} ${bad}`,
          'write a regular expression on the path, such as ^/blog/',
        );
    }
  }
  const costly = regexListProblem(req.include_regex ?? [], req.exclude_regex ?? []);
  if (costly) throw invalidRequest(costly, REGEX_HINT);
}
