import { SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import { SiftError } from '../common/errors';
import type { CallerClass } from '../config/app-config';
import { readFileBody } from './file-body';
import { readJsonBody } from './json-body';

const KiB = 1024;
const MiB = 1024 * KiB;

/** The bytes of body a route reads, by caller class. */
export type BodyLimits = Record<CallerClass, number>;

/** A request of one page or one site (fetch, crawl, map, scrape). */
export const SMALL_BODY: BodyLimits = { fleet: 64 * KiB, restricted: 64 * KiB };
/** A job's list of targets. */
export const JOB_BODY: BodyLimits = { fleet: 32 * MiB, restricted: 2 * MiB };
/** A few flags. */
export const TINY_BODY: BodyLimits = { fleet: 4 * KiB, restricted: 4 * KiB };
/**
 * A JSON-RPC message or batch of them (POST /mcp): 1 MiB, or room for a file the parse tool sends
 * in base64 (up to SIFT_PDF_MAX_BYTES, as POST /v1/parse takes it) beside its arguments.
 */
export const mcpBodyBytes = (fileBytes: number): number =>
  Math.max(1 * MiB, Math.ceil(fileBytes / 3) * 4 + 64 * KiB);

/** What a route declares of its body (see BodyLimit). */
export interface BodyRule {
  limits: BodyLimits;
  /** A batch's `targets` is held to the caller's class target limit before its DTO is checked. */
  countsTargets?: boolean;
  /** The body is a file (see readFileBody), within SIFT_PDF_MAX_BYTES: `limits` do not apply. */
  file?: boolean;
}

export const BODY_RULE = 'sift:body';

/**
 * The route reads a JSON body of at most these bytes for the caller's class; read by the route's
 * guard once the caller is known (nothing an unknown caller sends is read). A route without it
 * reads no body.
 */
export const BodyLimit = (limits: BodyLimits, opts: { countsTargets?: boolean } = {}) =>
  SetMetadata(BODY_RULE, { limits, ...opts } satisfies BodyRule);

/**
 * The route reads a file: the body itself, or multipart/form-data with a part "file" (and a JSON
 * part "options"), within the document download cap; read once the caller is known, as BodyLimit.
 */
export const FileBodyLimit = () =>
  SetMetadata(BODY_RULE, { limits: { fleet: 0, restricted: 0 }, file: true } satisfies BodyRule);

const size = (n: number) => (n % MiB === 0 ? `${n / MiB} MiB` : `${n / KiB} KiB`);

const tooLarge = (limit: number) =>
  new SiftError(
    413,
    'payload_too_large',
    `the body is over the ${size(limit)} this route accepts from this caller`,
    'send a smaller body; split large batches into several jobs',
  );

const unsupportedEncoding = (encoding: string) =>
  new SiftError(
    415,
    'unsupported_encoding',
    `request bodies are not decoded: Content-Encoding "${encoding.slice(0, 40)}" is refused`,
    'send the JSON body without Content-Encoding (identity)',
  );

/**
 * Reads the request's JSON body into `req.body` within `limit` bytes: a Content-Encoding other
 * than identity is 415 (nothing is inflated), a body over the limit 413 (by Content-Length first,
 * a streamed body cut at the limit), then the JSON (see readJsonBody); or, for a file route, the
 * file (see readFileBody).
 */
export function readBody(req: Request, limit: number, file = false): Promise<void> {
  const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') return Promise.reject(unsupportedEncoding(encoding));
  if (file) return readFileBody(req, limit).then((b) => void (req.body = b));
  return new Promise((resolve, reject) =>
    readJsonBody(
      req,
      limit,
      () => tooLarge(limit),
      (err?: unknown) => (err ? reject(err as Error) : resolve()),
    ),
  );
}
