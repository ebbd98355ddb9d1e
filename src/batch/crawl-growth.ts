import type { Tx } from '../dcache';
import type { CrawlSpec } from '../crawl/spec';
import type { TargetOutcome } from './lifecycle-types';
import type { JobEvents } from './job-events';
import type { JobSignals } from './job-signals';

/**
 * What the runner found on a crawl's page: its links (and, on the seed, its sitemaps' entries)
 * already within the crawl's scope, robots.txt and depth, each canonical URL once, in page order.
 */
export interface PageFindings {
  /** Link hops from the seed. */
  depth: number;
  /** Where a redirect took the page, as a canonical URL, when that is not its own. */
  landed?: string;
  /** The digest of the page's body. */
  digest?: string;
  links: { url: string; canonical: string; depth: number; foundOn: number | null }[];
}

/**
 * What a crawl's target row and its URL's crawl_seen row hold beside the URL, options and
 * canonical URL (see TARGET_ROW_BYTES in job-creation.ts, of which this is the crawl's share).
 */
const FOUND_ROW_BYTES = 320;

/**
 * Before a crawl's page is written: the earlier target it is, if the job already has it (a
 * redirect landed on a URL the job has met, or its body is one of the job's pages). Only read.
 */
export async function duplicateOf(
  tx: Tx,
  jobId: string,
  idx: number,
  f: PageFindings,
): Promise<number | undefined> {
  if (f.landed !== undefined) {
    const met = (await tx.crawls.seen(jobId, [f.landed])).get(f.landed);
    if (met !== undefined && met !== idx) return met;
  }
  return f.digest === undefined ? undefined : tx.crawls.sameBody(jobId, f.digest, idx);
}

/**
 * A target's row as its outcome ends it. A crawl's page keeps its body's digest, or, duplicating
 * an earlier page, that page's idx and no result of its own.
 */
export function endOf(outcome: TargetOutcome, found?: PageFindings, dup?: number) {
  if (outcome.kind === 'failed')
    return { status: 'failed' as const, error: outcome.message, hint: outcome.hint, code: outcome.code };
  if (dup !== undefined)
    return { status: 'done' as const, result: null, verdict: outcome.verdict, duplicateOf: dup };
  return { status: 'done' as const, result: outcome.result, verdict: outcome.verdict, digest: found?.digest };
}

/**
 * Once a crawl's page (not a duplicate) is written, in the same transaction (which holds the
 * job's row): where a redirect took it is noted, and the links it found that the job has not met
 * become its targets, as many as the job's limit leaves room for. Returns how many were added.
 */
export async function growCrawl(
  tx: Tx,
  job: { id: string; targetsTotal: number; spec: CrawlSpec; options: string },
  idx: number,
  f: PageFindings,
): Promise<number> {
  if (f.landed !== undefined) await tx.crawls.note(job.id, f.landed, idx);
  const room = job.spec.limit - job.targetsTotal;
  if (room <= 0 || f.links.length === 0) return 0;
  const met = await tx.crawls.seen(
    job.id,
    f.links.map((l) => l.canonical),
  );
  const fresh: Parameters<Tx['crawls']['grow']>[1] = [];
  let bytes = 0;
  for (const l of f.links) {
    if (met.has(l.canonical)) continue;
    met.set(l.canonical, -1);
    fresh.push({ ...l, options: job.options });
    bytes +=
      FOUND_ROW_BYTES + Buffer.byteLength(l.url) + 2 * Buffer.byteLength(l.canonical) + job.options.length;
    if (fresh.length >= room) break;
  }
  await tx.crawls.grow(job.id, fresh, bytes);
  return fresh.length;
}

/**
 * A crawl's page, written (see JobLifecycle.recordResults): the links it found join the job in the
 * same transaction, so the crawl can neither end while they are not stored nor pass its limit;
 * then its `crawl.page` event, and the job's end when nothing is left.
 */
export async function recordPage(
  at: { tx: Tx; events: JobEvents; signals: JobSignals; now: number },
  r: { jobId: string; idx: number; outcome: TargetOutcome; found?: PageFindings },
  spec: CrawlSpec,
  dup: number | undefined,
): Promise<true> {
  const { tx, events, now } = at;
  const { jobId, idx, outcome, found } = r;
  let added = 0;
  if (outcome.kind === 'done' && found && dup === undefined) {
    const job = (await tx.jobs.batchJob(jobId))!;
    const options = JSON.stringify(spec.options ?? {});
    added = await growCrawl(tx, { id: jobId, targetsTotal: job.targetsTotal, spec, options }, idx, found);
  }
  if (added > 0) tx.onCommit(() => at.signals.grown(jobId));
  const left = await events.append(
    tx,
    { jobId, type: 'crawl.page', at: now },
    {
      idx,
      status: outcome.kind,
      ...(outcome.kind === 'failed' ? { code: outcome.code } : {}),
      ...(found ? { depth: found.depth } : {}),
      ...(dup !== undefined ? { duplicate_of: dup } : {}),
      added,
    },
  );
  if (left <= 0) await events.end(tx, (await tx.jobs.batchJob(jobId))!, now);
  return true;
}
