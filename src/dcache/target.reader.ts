import { PostgresAdapter, sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import {
  RETRYABLE_TARGET_STATUSES,
  UNFINISHED_TARGET_STATUSES,
  type TargetStatus,
} from '../common/job-status';
import { toTarget, type BatchStoreMisses, type BatchTarget } from './rows';
import type { Tables } from './schema';

/** Which targets a page of results holds: those in `statuses`, and done ones of `verdict`. */
export interface TargetFilter {
  statuses?: readonly TargetStatus[];
  verdict?: string;
}

function filtered<O>(
  q: SelectQueryBuilder<Tables, 'batch_target', O>,
  f: TargetFilter,
): SelectQueryBuilder<Tables, 'batch_target', O> {
  if (f.statuses !== undefined)
    q = q.where('status', 'in', f.statuses.length > 0 ? f.statuses : ['-' as TargetStatus]);
  if (f.verdict !== undefined) q = q.where('status', '=', 'done').where('verdict', '=', f.verdict);
  return q;
}

/** Whether a target read whole is one the filter takes (as the queries filter). */
export function targetFilterTakes(f: TargetFilter, t: BatchTarget): boolean {
  if (f.statuses !== undefined && !f.statuses.includes(t.status)) return false;
  return f.verdict === undefined || (t.status === 'done' && t.verdict === f.verdict);
}

/** What an llms.txt shows of a page, read from its stored result. */
export interface PageHead {
  idx: number;
  url: string;
  final_url: string | null;
  title: string | null;
  description: string | null;
}

/** Reads of the batch_target table: one row per URL of a job. */
export class TargetReader {
  constructor(
    protected readonly q: Kysely<Tables>,
    protected readonly misses: BatchStoreMisses,
  ) {}

  async batchTargets(jobId: string): Promise<BatchTarget[] | undefined> {
    const rows = await this.q
      .selectFrom('batch_target')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('idx')
      .execute();
    if (rows.length === 0) {
      const job = await this.q
        .selectFrom('batch_job')
        .select('id')
        .where('id', '=', jobId)
        .executeTakeFirst();
      if (!job) {
        this.misses.batchTargets++;
        return undefined;
      }
    }
    return rows.map(toTarget);
  }

  /** One page of targets with idx > after, in idx order (only those the filter takes). */
  async batchTargetsPage(
    jobId: string,
    after: number,
    limit: number,
    filter: TargetFilter = {},
  ): Promise<BatchTarget[]> {
    const q = this.q
      .selectFrom('batch_target')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('idx', '>', after);
    const rows = await filtered(q, filter).orderBy('idx').limit(limit).execute();
    return rows.map(toTarget);
  }

  /**
   * The page fields an llms.txt lists (where it ended, its title, its description) of a job's
   * done results with verdict ok after `after`, at most `limit`, in idx order: read from each
   * stored envelope by the database's own JSON functions, so no result is sent here whole.
   */
  async pageHeads(jobId: string, after: number, limit: number): Promise<PageHead[]> {
    const pg = this.q.getExecutor().adapter instanceof PostgresAdapter;
    const field = (path: string[]) =>
      pg
        ? sql<string | null>`(result::json) #>> ${sql.lit(`{${path.join(',')}}`)}`
        : sql<string | null>`json_extract(result, ${sql.lit(`$.${path.join('.')}`)})`;
    const q = this.q
      .selectFrom('batch_target')
      .select([
        'idx',
        'url',
        field(['final_url']).as('final_url'),
        field(['title']).as('title'),
        field(['metadata', 'description']).as('description'),
      ])
      .where('job_id', '=', jobId)
      .where('idx', '>', after)
      .where('result', 'is not', null);
    return filtered(q, { statuses: ['done'], verdict: 'ok' })
      .orderBy('idx')
      .limit(limit)
      .execute();
  }

  /**
   * The UTF-8 size of each target's stored text (url, result, error, hint) after `after`, in idx
   * order, without reading the results (octet_length takes the size from the record header).
   */
  async batchResultSizes(
    jobId: string,
    after: number,
    limit: number,
    filter: TargetFilter = {},
  ): Promise<{ idx: number; bytes: number }[]> {
    const q = this.q
      .selectFrom('batch_target')
      .select([
        'idx',
        sql<number>`octet_length(url) + coalesce(octet_length(result), 0) + coalesce(octet_length(error), 0) + coalesce(octet_length(hint), 0)`.as(
          'bytes',
        ),
      ])
      .where('job_id', '=', jobId)
      .where('idx', '>', after);
    return filtered(q, filter).orderBy('idx').limit(limit).execute();
  }

  /** The job's targets not finished (pending, waiting for a duplicate, running), and its last idx. */
  async unfinished(jobId: string): Promise<{ count: number; lastIdx: number }> {
    const left = await this.q
      .selectFrom('batch_target')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('job_id', '=', jobId)
      .where('status', 'in', UNFINISHED_TARGET_STATUSES)
      .executeTakeFirst();
    const last = await this.q
      .selectFrom('batch_target')
      .select((eb) => eb.fn.max('idx').as('idx'))
      .where('job_id', '=', jobId)
      .executeTakeFirst();
    return { count: Number(left?.n ?? 0), lastIdx: Number(last?.idx ?? -1) };
  }

  /** Whether the job has a pending target left to claim (a duplicate waits for its first). */
  async hasPending(jobId: string): Promise<boolean> {
    const row = await this.q
      .selectFrom('batch_target')
      .select('idx')
      .where('job_id', '=', jobId)
      .where('status', '=', 'pending')
      .where('dup_of', 'is', null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Whether any target of the job waits for an earlier one with the same URL and options. */
  async hasDuplicates(jobId: string): Promise<boolean> {
    const row = await this.q
      .selectFrom('batch_target')
      .select('idx')
      .where('job_id', '=', jobId)
      .where('dup_of', 'is not', null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The job's failed and cancelled targets, in idx order: what a retry fetches again. */
  async retryableTargets(
    jobId: string,
  ): Promise<{ idx: number; url: string; options: string; code: string | null }[]> {
    return this.q
      .selectFrom('batch_target')
      .select(['idx', 'url', 'options', 'code'])
      .where('job_id', '=', jobId)
      .where('status', 'in', RETRYABLE_TARGET_STATUSES)
      .orderBy('idx')
      .execute();
  }

  /** The running targets `holder` holds, by job and idx. */
  async targetsHeldBy(holder: string): Promise<{ jobId: string; idx: number }[]> {
    const rows = await this.q
      .selectFrom('batch_target')
      .select(['job_id', 'idx'])
      .where('holder', '=', holder)
      .where('status', '=', 'running')
      .orderBy('job_id')
      .orderBy('idx')
      .execute();
    return rows.map((r) => ({ jobId: r.job_id, idx: r.idx }));
  }

  /** Live jobs in which `holder` holds running targets, with their policy and how many it holds. */
  async jobsHeldBy(holder: string): Promise<{ jobId: string; held: number }[]> {
    const rows = await this.q
      .selectFrom('batch_target')
      .select(['job_id', (eb) => eb.fn.countAll<number>().as('held')])
      .where('holder', '=', holder)
      .where('status', '=', 'running')
      .groupBy('job_id')
      .orderBy('job_id')
      .execute();
    return rows.map((r) => ({ jobId: r.job_id, held: Number(r.held) }));
  }
}
