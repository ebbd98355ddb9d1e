import { growCrawl, type CrawlSpec, type PageFindings } from '../../crawl';
import type { At } from './at';

/**
 * grow a crawl: a crawl's page, written by recordResults, in the same transaction (which holds
 * the job's row): the links it found join the job (growCrawl), so the crawl can neither end while
 * they are not stored nor pass its limit; then its `crawl.page` event, and the job's end when
 * nothing is left. Instances holding the job are told it grew once this commits.
 */
export async function recordCrawlPage(
  at: At,
  r: {
    jobId: string;
    idx: number;
    outcome: { kind: 'done' | 'failed'; code?: string };
    found?: PageFindings;
  },
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
