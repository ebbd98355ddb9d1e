import type { Tx } from '../dcache';
import type { PageFindings } from './findings';
import type { CrawlSpec } from './spec';

/**
 * What a crawl's target row and its URL's crawl_seen row hold beside the URL, options and
 * canonical URL (see TARGET_ROW_BYTES in batch/job-creation.ts, of which this is the crawl's share).
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
