import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ErrorBody } from '../common/error-codes';
import { invalidRequest } from '../common/errors';
import type { BatchEvent, BatchJob, BatchTarget, Delivery } from '../dcache';
import { FetchEnvelope } from '../pages/envelope';
import {
  DEFAULT_RESTART_POLICY,
  DELIVERY_STATES,
  EVENT_TYPES,
  JOB_STATUSES,
  RESTART_POLICIES,
  TARGET_STATUSES,
  type DeliveryState,
  type JobStatus,
  type RestartPolicy,
  type TargetStatus,
} from '../common/job-status';
import { withoutUserinfo } from '../common/urls';
import { crawlSpecOf } from '../crawl';

export const JOB_KINDS = ['batch', 'crawl', 'monitor_run', 'llmstxt'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/*
 * What the batch API answers: each class is both the runtime shape and its OpenAPI schema, and is
 * built here from the stored rows.
 */

/**
 * A stored time (Unix seconds, to the millisecond as a fraction) in ISO-8601 with milliseconds.
 * Rounded: 1700000000.123 * 1000 is 1700000000122.9998, which Date would cut to .122.
 */
export const iso = (s: number) => new Date(Math.round(s * 1000)).toISOString();

@ApiSchema({ name: 'JobViewDto' })
export class JobView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: JOB_STATUSES }) status: JobStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The job's error (e.g. server_restarted, every target failed); null when none.",
    example: null,
  })
  error: string | null;
  @ApiProperty() targets_total: number;
  @ApiProperty({
    description:
      "Finished targets: done or failed (the seed's targetsDone), so failures count here too; targets_failed says how many of them failed. Cancelled targets are not counted (see targets_cancelled).",
  })
  targets_done: number;
  @ApiProperty({ description: 'Of targets_done, those that failed.' }) targets_failed: number;
  @ApiProperty({
    description:
      "Targets the job's cancel ended before they finished (never started, or in flight: the fetch was aborted); not in targets_done.",
  })
  targets_cancelled: number;
  @ApiProperty({ description: "Done targets whose verdict is not ok (see the envelope's verdict)." })
  targets_flagged: number;
  @ApiProperty({ format: 'date-time', description: 'ISO-8601, to the millisecond.' }) created_at: string;
  @ApiProperty({ format: 'date-time', description: 'When the job is swept unless read or worked on before.' })
  lease_expires_at: string;
  @ApiProperty({ description: 'UTF-8 bytes of stored results.' }) nbytes: number;
  @ApiProperty({ enum: RESTART_POLICIES }) on_restart: RestartPolicy;
  @ApiProperty({ description: 'Seconds the job is kept after its last activity (lease).' }) ttl_s: number;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The job whose failed targets this one retries; null for a submitted job.',
  })
  parent_id: string | null;
  @ApiProperty({
    enum: JOB_KINDS,
    description:
      "batch: a list of URLs; crawl: a site, read from its seed; monitor_run: a monitor's run (its pages or its crawl, each against the last run); llmstxt: a crawl whose pages make the site's llms.txt and llms-full.txt (GET /v1/llmstxt/{id}).",
  })
  kind: JobKind;
  @ApiPropertyOptional({ description: "A monitor's run: the monitor." }) monitor_id?: string;
  @ApiPropertyOptional({ description: "A crawl's seed URL." }) seed?: string;
  @ApiPropertyOptional({ description: 'The most targets a crawl may hold, its seed included.' })
  limit?: number;
}

@ApiSchema({ name: 'TargetResultDto' })
export class TargetResult {
  @ApiProperty() idx: number;
  @ApiProperty() url: string;
  @ApiProperty({
    enum: TARGET_STATUSES,
    description:
      'pending and running: not finished yet (only a live job has them); done or failed: finished; cancelled: its job was cancelled before it finished (result and error null).',
  })
  status: TargetStatus;
  @ApiPropertyOptional({ type: FetchEnvelope, nullable: true }) result: FetchEnvelope | null;
  @ApiPropertyOptional({ type: ErrorBody, nullable: true }) error: ErrorBody | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      "In a retry job: the idx of the parent's target this one fetched again. In a crawl: the idx of the page it was found on (null for the seed and a sitemap's entries).",
  })
  parent_idx: number | null;
  @ApiPropertyOptional({ description: "A crawl's target: link hops from the seed (a sitemap's entry: 1)." })
  depth?: number;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description:
      "A crawl's done target whose page the job already has (a redirect landed on it, or the body is the same): that target's idx, and no result of its own.",
  })
  duplicate_of?: number | null;
}

@ApiSchema({ name: 'EventDto' })
export class EventView {
  @ApiProperty() seq: number;
  @ApiProperty({ enum: EVENT_TYPES }) type: string;
  @ApiProperty({ format: 'date-time', description: 'ISO-8601, to the millisecond.' }) at: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: unknown;
}

@ApiSchema({ name: 'WebhookViewDto' })
export class WebhookView {
  @ApiProperty() url: string;
  @ApiProperty({ enum: EVENT_TYPES, isArray: true }) events: string[];
}

@ApiSchema({ name: 'DeliveryErrorDto' })
export class DeliveryError {
  @ApiProperty({
    description:
      'http_status (a non-2xx answer; see last_status), or a fetch error code such as connect_error, timeout or blocked_address.',
    example: 'http_status',
  })
  code: string;
  @ApiProperty({ example: 'the receiver answered 500' }) message: string;
}

@ApiSchema({ name: 'DeliveryDto' })
export class DeliveryView {
  @ApiProperty({ description: "The event's seq; the delivery's webhook-id is `<job id>:<seq>`." })
  seq: number;
  @ApiProperty({ enum: EVENT_TYPES }) type: string;
  @ApiProperty({
    enum: DELIVERY_STATES,
    description: 'pending: to be sent at next_attempt_at; delivered: answered 2xx; failed: given up.',
  })
  state: DeliveryState;
  @ApiProperty({ description: 'Attempts since it was (re)queued.' }) attempts: number;
  @ApiProperty({ type: Number, nullable: true, description: "The receiver's last HTTP status." })
  last_status: number | null;
  @ApiProperty({ type: DeliveryError, nullable: true }) last_error: DeliveryError | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'null unless pending.' })
  next_attempt_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export function deliveryView(d: Delivery): DeliveryView {
  return {
    seq: d.seq,
    type: d.type,
    state: d.state,
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError ? { code: d.lastError, message: d.lastMessage ?? '' } : null,
    next_attempt_at: d.state === 'pending' ? iso(d.nextAttemptAt) : null,
    created_at: iso(d.createdAt),
  };
}

/** The job as the API shows it; its lease is shown as when it expires. */
export function jobView(j: BatchJob, defaultTtlS: number): JobView {
  const ttlS = j.ttlS ?? defaultTtlS;
  return {
    id: j.id,
    status: j.status,
    error: j.error || null,
    targets_total: j.targetsTotal,
    targets_done: j.targetsDone,
    targets_failed: j.targetsFailed ?? 0,
    // A cancelled job's unfinished targets end just after it (see endCancelledTargets): it shows
    // them cancelled at once, on every instance.
    targets_cancelled: j.status === 'cancelled' ? j.targetsTotal - j.targetsDone : (j.targetsCancelled ?? 0),
    targets_flagged: j.targetsFlagged ?? 0,
    created_at: iso(j.createdAt),
    lease_expires_at: iso(j.lease + ttlS),
    nbytes: j.nbytes,
    on_restart: j.onRestart ?? DEFAULT_RESTART_POLICY,
    ttl_s: ttlS,
    parent_id: j.parentId ?? null,
    kind: (JOB_KINDS as readonly string[]).includes(j.kind ?? '') ? (j.kind as JobKind) : 'batch',
    ...(j.monitorId ? { monitor_id: j.monitorId } : {}),
    ...crawlFields(j),
  };
}

/** A crawl's seed and limit, for its view. */
function crawlFields(j: BatchJob): { seed?: string; limit?: number } {
  const spec = crawlSpecOf(j.crawl);
  return spec ? { seed: withoutUserinfo(spec.seed), limit: spec.limit } : {};
}

function errorOf(t: BatchTarget): ErrorBody | null {
  return t.status === 'failed'
    ? { code: t.code ?? 'failed', message: t.error ?? '', hint: t.hint ?? '' }
    : null;
}

/** One TargetResult as JSON, the stored envelope spliced in rather than parsed and written again. */
export function resultJson(t: BatchTarget): string {
  const head = JSON.stringify({
    idx: t.idx,
    url: withoutUserinfo(t.url),
    status: t.status,
  } satisfies Partial<TargetResult>);
  const crawl =
    t.depth === null || t.depth === undefined
      ? ''
      : `,"depth":${t.depth},"duplicate_of":${t.duplicateOf ?? null}`;
  return `${head.slice(0, -1)},"result":${t.result ?? 'null'},"error":${JSON.stringify(errorOf(t))},"parent_idx":${t.parentIdx ?? t.foundOn ?? null}${crawl}}`;
}

export function eventView(e: BatchEvent): EventView {
  return { seq: e.seq, type: e.type, at: iso(e.at), data: JSON.parse(e.data) as unknown };
}

/** The latest time a cursor may hold: Date's own limit, in seconds. */
const MAX_CURSOR_TIME = 8.64e12;

/** The jobs-list cursor: the last job's (createdAt, id), opaque to the caller. */
export function encodeJobCursor(j: Pick<BatchJob, 'createdAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([j.createdAt, j.id])).toString('base64url');
}

export function decodeJobCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [number, string];
    // Times are kept to the millisecond (a fraction); a cursor of an older build holds whole seconds.
    const time = typeof createdAt === 'number' && Number.isFinite(createdAt);
    if (!time || createdAt < 0 || createdAt > MAX_CURSOR_TIME || typeof id !== 'string') {
      throw new Error('shape');
    }
    return { createdAt, id };
  } catch {
    throw invalidRequest(
      'after is not a value sift gave out',
      'pass the "next" value of the previous page as after, unchanged',
    );
  }
}
