import { duplicateOf, type PageFindings } from '../../crawl';
import { lockJob, SearchStore, storedDocOf, type PageDoc } from '../../dcache';
import type { At } from './at';
import { recordCrawlPage } from './grow-crawl';
import { appendPageChange } from './monitor-run';

/** How a fetched target ended. */
export type TargetOutcome =
  | { kind: 'done'; result: string; verdict?: string; doc?: PageDoc }
  | { kind: 'failed'; code: string; message: string; hint: string };

/** A target's outcome as `holder` reports it. */
export interface ResultRecord {
  jobId: string;
  idx: number;
  holder: string;
  outcome: TargetOutcome;
  /** A crawl's page: what the runner found on it (its depth at least). */
  found?: PageFindings;
}

/**
 * record a result: target running → done | failed (target.done | target.failed); the job's last
 * one ends it, running → done | partial | failed (finalStatus, batch.<status>). Several results
 * in one transaction (a commit per result was a tenth of the runner's time), in job order, each
 * job's row taken before its targets: two transactions taking the same jobs' rows in opposite
 * orders would deadlock (PostgreSQL). Whether each was written: only while the job runs and its
 * holder still holds the target (a cancelled or removed job, or a target taken back, discards it).
 *
 * The pages' search documents are written first, before any job's row is taken, and one whose
 * result is not written (or is a duplicate's) is taken out again: indexing a page is most of the
 * transaction's work, and every other writer of the job (a claim, a lease) waits for its row.
 */
export async function recordResults(at: At, results: ResultRecord[]): Promise<boolean[]> {
  const order = results
    .map((_, i) => i)
    .sort((a, b) => cmp(results[a].jobId, results[b].jobId) || results[a].idx - results[b].idx || a - b);
  const docs: Indexed[] = [];
  for (const i of order) docs[i] = await indexPage(at, results[i]);
  const written: boolean[] = new Array<boolean>(results.length);
  let locked: string | undefined;
  for (const i of order) {
    const r = results[i];
    if (r.jobId !== locked) await lockJob(at.tx, (locked = r.jobId));
    written[i] = await recordOne(at, r, docs[i]);
  }
  return written;
}

/** A done target's page as a search document (none for a page without text), and its row's id. */
interface Indexed {
  doc?: PageDoc;
  /** Undefined when the target had a document already (the same target twice in one group). */
  id?: number;
}

/**
 * Indexes a done target's page, found by /v1/search from this commit on. (The runner gives the
 * page's document; an outcome without one has it read from its result.)
 */
async function indexPage(at: At, r: ResultRecord): Promise<Indexed> {
  if (r.outcome.kind !== 'done') return {};
  const doc = r.outcome.doc ?? storedDocOf(r.outcome.result);
  return { doc, id: await SearchStore.indexResult(at.tx, r.jobId, r.idx, doc, Math.round(at.now * 1000)) };
}

async function recordOne(at: At, r: ResultRecord, page: Indexed): Promise<boolean> {
  const { tx, events, now } = at;
  const { jobId, idx, holder, outcome, found } = r;
  const facts = await events.factsOf(tx, jobId);
  // A crawl's page that landed on, or reads as, one the job already has is done as its duplicate.
  const dup =
    facts.crawl && found && outcome.kind === 'done' ? await duplicateOf(tx, jobId, idx, found) : undefined;
  // The job's status is checked in the update itself.
  const end = endOf(outcome, found, dup);
  const ok = await tx.targets.finishHeldTarget({ jobId, idx, holder, now, ...end });
  // The page stays found only with its result (a duplicate's page is its first's); a written one
  // whose document could not go in first (its target's place was taken) goes in now.
  const kept = ok && end.result;
  if (page.id !== undefined && !kept) await SearchStore.unindex(tx, page.id);
  if (page.id === undefined && page.doc && kept)
    await SearchStore.indexResult(tx, jobId, idx, page.doc, Math.round(now * 1000));
  if (!ok) return false;
  if (facts.monitorId && outcome.kind === 'done' && dup === undefined)
    await appendPageChange(at, jobId, idx, outcome.result);
  if (facts.crawl) return recordCrawlPage(at, r, facts.crawl, dup);
  // Targets with the same URL and options wait for this one, and get what it got.
  const dups = facts.dups ? await tx.targets.finishDuplicates({ jobId, idx, now, ...end }) : [];
  // The statement moved the job's counters (dcache/counters.ts); each event's insert reads them.
  let left = 0;
  for (const i of [idx, ...dups]) {
    left =
      outcome.kind === 'done'
        ? await events.append(tx, { jobId, type: 'target.done', at: now }, { idx: i })
        : await events.append(tx, { jobId, type: 'target.failed', at: now }, { idx: i, code: outcome.code });
  }
  if (left <= 0) await events.end(tx, (await tx.jobs.batchJob(jobId))!, now);
  return true;
}

/**
 * A target's row as its outcome ends it. A crawl's page keeps its body's digest, or, duplicating
 * an earlier page, that page's idx and no result of its own.
 */
function endOf(outcome: TargetOutcome, found?: PageFindings, dup?: number) {
  if (outcome.kind === 'failed')
    return { status: 'failed' as const, error: outcome.message, hint: outcome.hint, code: outcome.code };
  if (dup !== undefined)
    return { status: 'done' as const, result: null, verdict: outcome.verdict, duplicateOf: dup };
  return { status: 'done' as const, result: outcome.result, verdict: outcome.verdict, digest: found?.digest };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
