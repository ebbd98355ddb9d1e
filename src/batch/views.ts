import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ErrorBody } from '../common/error-codes';
import { invalidRequest } from '../common/errors';
import type { BatchEvent, BatchJob, BatchTarget } from '../dcache';
import { FetchEnvelope } from '../fetch/envelope';
import {
  DEFAULT_RESTART_POLICY,
  EVENT_TYPES,
  JOB_STATUSES,
  RESTART_POLICIES,
  TARGET_STATUSES,
  type JobStatus,
  type RestartPolicy,
  type TargetStatus,
} from './job-status';

/*
 * What the batch API answers: each class is both the runtime shape and its OpenAPI schema, and is
 * built here from the stored rows.
 */

const iso = (s: number) => new Date(s * 1000).toISOString();

@ApiSchema({ name: 'JobViewDto' })
export class JobView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: JOB_STATUSES }) status: JobStatus;
  @ApiProperty({ description: "The job's error, '' when none (e.g. server_restarted).", example: '' })
  error: string;
  @ApiProperty() targets_total: number;
  @ApiProperty() targets_done: number;
  @ApiProperty() targets_failed: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) lease_expires_at: string;
  @ApiProperty({ description: 'UTF-8 bytes of stored results.' }) nbytes: number;
  @ApiProperty({ enum: RESTART_POLICIES }) on_restart: RestartPolicy;
}

@ApiSchema({ name: 'TargetResultDto' })
export class TargetResult {
  @ApiProperty() idx: number;
  @ApiProperty() url: string;
  @ApiProperty({ enum: TARGET_STATUSES }) status: TargetStatus;
  @ApiPropertyOptional({ type: FetchEnvelope, nullable: true }) result: FetchEnvelope | null;
  @ApiPropertyOptional({ type: ErrorBody, nullable: true }) error: ErrorBody | null;
}

@ApiSchema({ name: 'EventDto' })
export class EventView {
  @ApiProperty() seq: number;
  @ApiProperty({ enum: EVENT_TYPES }) type: string;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: unknown;
}

/** The job as the API shows it; its lease is shown as when it expires. */
export function jobView(j: BatchJob, ttlS: number): JobView {
  return {
    id: j.id,
    status: j.status,
    error: j.error,
    targets_total: j.targetsTotal,
    targets_done: j.targetsDone,
    targets_failed: j.targetsFailed ?? 0,
    created_at: iso(j.createdAt),
    lease_expires_at: iso(j.lease + ttlS),
    nbytes: j.nbytes,
    on_restart: j.onRestart ?? DEFAULT_RESTART_POLICY,
  };
}

function errorOf(t: BatchTarget): ErrorBody | null {
  return t.status === 'failed'
    ? { code: t.code ?? 'failed', message: t.error ?? '', hint: t.hint ?? '' }
    : null;
}

/** One TargetResult as JSON, the stored envelope spliced in rather than parsed and written again. */
export function resultJson(t: BatchTarget): string {
  const head = JSON.stringify({ idx: t.idx, url: t.url, status: t.status } satisfies Partial<TargetResult>);
  return `${head.slice(0, -1)},"result":${t.result ?? 'null'},"error":${JSON.stringify(errorOf(t))}}`;
}

export function eventView(e: BatchEvent): EventView {
  return { seq: e.seq, type: e.type, at: iso(e.at), data: JSON.parse(e.data) as unknown };
}

/** The jobs-list cursor: the last job's (createdAt, id), opaque to the caller. */
export function encodeJobCursor(j: Pick<BatchJob, 'createdAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([j.createdAt, j.id])).toString('base64url');
}

export function decodeJobCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [number, string];
    if (!Number.isInteger(createdAt) || typeof id !== 'string') throw new Error('shape');
    return { createdAt, id };
  } catch {
    throw invalidRequest(
      'cursor is not one sift gave out',
      'pass the "next" value of the previous page, unchanged',
    );
  }
}
