import { SiftError, forbidden, invalidRequest } from '../common/errors';
import { DEFAULT_RESTART_POLICY, DEFAULT_WEBHOOK_EVENTS, type RestartPolicy } from '../common/job-status';
import { isHttpUrl, MAX_URL_LENGTH } from '../common/urls';
import { canonicalUrl, crawlSpecFrom, type CrawlAsk } from '../crawl';
import {
  checkPageScripts,
  checkRobotsOption,
  proxyOf,
  type OptionRules,
  renderModeOf,
  type Caller,
  type RenderAsk,
} from '../pages/caller-policy';
import { TimeSlicer } from '../common/time-slice';
import { fingerprintInSlices, fingerprintOf } from './canonical';
import { markDuplicatesInSlices } from './dedupe';
import { INVALID_URL, type DraftTarget, type JobDraft } from './job-creation';

/** The submission rules of POST /v1/batch and /v1/crawl: what a request may ask, and the job draft it makes. */

function hasHeaders(options: object | undefined): boolean {
  return Object.keys((options as { headers?: object } | undefined)?.headers ?? {}).length > 0;
}

export interface SubmitTarget {
  url: string;
  options?: { headers?: object };
}

export interface SubmitRequest {
  targets: SubmitTarget[];
  options?: object;
  on_restart?: RestartPolicy;
  idempotency_key?: string;
  webhook?: { url: string; secret: string; events?: string[] };
  ttl_s?: number;
  ignore_invalid_urls?: boolean;
}

/** Why a target URL is not one sift fetches, or undefined when it is. */
export function urlProblem(url: string): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `is over ${MAX_URL_LENGTH} characters`;
  if (!isHttpUrl(url)) return 'must be an absolute http or https URL';
  return undefined;
}

/** 400 too_many_targets when a job of `n` targets is over the caller's class limit. */
export function checkTargetCount(maxTargets: number, n: number, caller: Caller): void {
  if (n > maxTargets) {
    throw new SiftError(
      400,
      'too_many_targets',
      `${n} targets is over the ${maxTargets} a ${caller.callerClass} caller may send in one job`,
      `split the list into jobs of at most ${maxTargets} targets`,
    );
  }
}

export interface DraftLimits {
  /** The Idempotency-Key header, when sent. */
  headerKey?: string;
  /** Targets the caller's class may send in one job. */
  maxTargets: number;
  /** The longest `ttl_s` a job may ask for, and the TTL of one that asks none. */
  maxTtlS: number;
  defaultTtlS: number;
  /** Page scripts and egress proxies, as the operator allows them. */
  rules: OptionRules;
}

/** What every job's submission asks beside its targets: checked the same for batches and crawls. */
export interface JobAsk {
  options?: object;
  on_restart?: RestartPolicy;
  idempotency_key?: string;
  webhook?: { url: string; secret: string; events?: string[] };
  ttl_s?: number;
}

/**
 * The checks and settings every job shares: the idempotency key (header and body agree), its TTL,
 * its webhook, and what the caller's class may ask in `optionSets` (headers, robots: false).
 */
export function jobBasics(
  caller: Caller,
  req: JobAsk,
  o: DraftLimits,
  optionSets: (object | undefined)[],
): Pick<JobDraft, 'idemKey' | 'onRestart' | 'ttlS' | 'webhook'> {
  if (o.headerKey !== undefined && req.idempotency_key !== undefined && o.headerKey !== req.idempotency_key) {
    throw invalidRequest(
      'the Idempotency-Key header and idempotency_key differ',
      'send the key once, or the same in both',
    );
  }
  if (req.ttl_s !== undefined && req.ttl_s > o.maxTtlS) {
    throw invalidRequest(
      `ttl_s must not be greater than ${o.maxTtlS}`,
      `ask for at most ${o.maxTtlS} seconds (SIFT_BATCH_MAX_TTL_S)`,
    );
  }
  if (caller.callerClass !== 'fleet' && optionSets.some(hasHeaders)) {
    throw forbidden(
      'restricted callers may not send custom request headers',
      'remove "headers" from the options',
    );
  }
  // robots: false is for fleet callers only, as on /v1/fetch.
  for (const options of optionSets) {
    checkRobotsOption(caller, (options as { robots?: boolean } | undefined)?.robots);
  }
  const webhook = req.webhook && {
    url: req.webhook.url,
    secret: req.webhook.secret,
    events: req.webhook.events ?? [...DEFAULT_WEBHOOK_EVENTS],
  };
  return {
    idemKey: o.headerKey ?? req.idempotency_key ?? '',
    onRestart: req.on_restart ?? DEFAULT_RESTART_POLICY,
    ttlS: req.ttl_s ?? o.defaultTtlS,
    webhook,
  };
}

/**
 * A target's options: the job's, and its own over them. A field its own leave unset keeps the
 * job's: a validated DTO holds every field it declares, unset ones as undefined, and a plain
 * spread put those over the job's (a target asking only `max_bytes` lost the job's `format`).
 */
function withOwn(job: object, own: object | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of [job, own ?? {}]) {
    for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * Checks a submission against the caller's policy and limits; the job to create, or a 4xx (the
 * first invalid URL named by its index). Per-target work runs in slices with turns of the event
 * loop between them: over 10,000 targets it held the loop for about 90 ms in one piece.
 */
export async function draftJob(caller: Caller, req: SubmitRequest, o: DraftLimits): Promise<JobDraft> {
  checkTargetCount(o.maxTargets, req.targets.length, caller);
  const slicer = new TimeSlicer();
  const defaults = req.options ?? {};
  const targets = new Array<DraftTarget>(req.targets.length);
  for (let idx = 0; idx < req.targets.length; idx++) {
    const t = req.targets[idx];
    const options = withOwn(defaults, t.options);
    // Refused now rather than failed once the job runs.
    renderModeOf(options as RenderAsk, `targets.${idx}: `);
    checkPageScripts(caller, options as RenderAsk, o.rules.pageScripts, `targets.${idx}: `);
    proxyOf(caller, (options as { proxy?: string }).proxy, o.rules, `targets.${idx}: `);
    const problem = urlProblem(t.url);
    if (problem && !req.ignore_invalid_urls) {
      throw invalidRequest(
        `targets.${idx}.url ${problem}`,
        'fix the URL, or send "ignore_invalid_urls": true to keep it as a failed target',
      );
    }
    targets[idx] = {
      url: t.url,
      options: JSON.stringify(options),
      failed: problem
        ? { code: INVALID_URL, message: `the URL ${problem}`, hint: 'fix the URL and submit it again' }
        : undefined,
    };
    if (slicer.due()) await slicer.turn();
  }
  const basics = jobBasics(caller, req, o, [req.options, ...req.targets.map((t) => t.options)]);
  return {
    caller,
    ...basics,
    fingerprint: await fingerprintInSlices(
      {
        targets: req.targets,
        options: req.options ?? null,
        on_restart: basics.onRestart,
        webhook: basics.webhook ?? null,
        ttl_s: req.ttl_s ?? null,
        ignore_invalid_urls: req.ignore_invalid_urls ?? false,
      },
      slicer,
    ),
    targets: await markDuplicatesInSlices(targets, slicer),
  };
}

/** POST /v1/crawl's body, as validated by its DTO. */
export interface CrawlRequest extends JobAsk, CrawlAsk {}

/**
 * The job a crawl request makes: its seed as the one target (depth 0), and the crawl it asked
 * (checked by crawlSpecFrom) kept with the job; everything every job checks is checked as for a
 * batch.
 */
export function draftCrawl(
  caller: Caller,
  req: CrawlRequest,
  o: DraftLimits,
  llms?: { full: boolean },
): JobDraft {
  const problem = urlProblem(req.url);
  if (problem) throw invalidRequest(`url ${problem}`, 'send the absolute http(s) URL to start from');
  const spec = crawlSpecFrom(req, { callerClass: caller.callerClass, maxTargets: o.maxTargets });
  if (llms) {
    const asked = (req.options ?? {}) as { format?: unknown; formats?: unknown };
    if (asked.formats !== undefined || (asked.format !== undefined && asked.format !== 'markdown')) {
      throw invalidRequest(
        'options.format and options.formats are not taken by an llms.txt job',
        'leave them out: its pages are read as markdown',
      );
    }
    spec.llms_files = true;
    if (llms.full) spec.llms_full = true;
  }
  renderModeOf((req.options ?? {}) as RenderAsk, 'options: ');
  checkPageScripts(caller, (req.options ?? {}) as RenderAsk, o.rules.pageScripts, 'options: ');
  proxyOf(caller, (req.options as { proxy?: string } | undefined)?.proxy, o.rules, 'options: ');
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
