import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AppConfig, type CallerClass } from '../config/app-config';
import { SiftError } from '../common/errors';
import { checkTargetCount } from '../batch/submission';
import { Authenticator, type AuthedRequest } from './authenticator';
import { readJsonBody } from './json-body';

const KiB = 1024;
const MiB = 1024 * KiB;

/** The body each route reads, by caller class. Routes not listed read no body at all. */
export const BODY_LIMITS: Record<string, Record<CallerClass, number>> = {
  'POST /v1/fetch': { fleet: 64 * KiB, restricted: 64 * KiB },
  'POST /v1/batch': { fleet: 32 * MiB, restricted: 2 * MiB },
  'POST /v1/batch/:id/deliveries/redeliver': { fleet: 4 * KiB, restricted: 4 * KiB },
  'POST /v1/crawl': { fleet: 64 * KiB, restricted: 64 * KiB },
  'POST /v1/map': { fleet: 64 * KiB, restricted: 64 * KiB },
  // The Firecrawl-compatible routes and MCP (see SPEC "Agents and tools").
  'POST /v2/scrape': { fleet: 64 * KiB, restricted: 64 * KiB },
  'POST /v2/batch/scrape': { fleet: 32 * MiB, restricted: 2 * MiB },
  'POST /v2/crawl': { fleet: 64 * KiB, restricted: 64 * KiB },
  'POST /v2/map': { fleet: 64 * KiB, restricted: 64 * KiB },
  'POST /mcp': { fleet: 1 * MiB, restricted: 1 * MiB },
};

/** The paths the gate guards: sift's API, the Firecrawl-compatible one, and MCP. */
const GATED = ['/v1', '/v2', '/mcp'];

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

function routeOf(req: Request): string {
  const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
  // A job's own routes are one route whatever the job.
  return `${req.method} ${path.toLowerCase().replace(/^\/v1\/batch\/[^/]+\//, '/v1/batch/:id/')}`;
}

/**
 * What every /v1 request passes before Nest sees it, in this order: the bearer token (401, and the
 * body is never read); then, for a route that takes a body, a Content-Encoding other than identity
 * (415: nothing is inflated), the route's byte limit for the caller's class (413: Content-Length
 * first, a streamed body cut at the limit), JSON parsing, and a batch's per-class target count
 * (400 too_many_targets before any DTO validation runs). Every request then goes on to Nest: its
 * route's guard, pipe and handler answer it (one entrance per route).
 */
@Injectable()
export class RequestGate {
  constructor(
    private readonly auth: Authenticator,
    private readonly config: AppConfig,
  ) {}

  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    if (!GATED.some((p) => req.path === p || req.path.startsWith(`${p}/`))) return next();
    this.auth.authenticate(req as AuthedRequest).then((caller) => {
      const route = routeOf(req);
      const limit = BODY_LIMITS[route]?.[caller.callerClass];
      if (limit === undefined) return next();
      const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
      if (encoding !== '' && encoding !== 'identity') return next(unsupportedEncoding(encoding));
      readJsonBody(
        req,
        limit,
        () => tooLarge(limit),
        (err?: unknown) => {
          if (err) return next(err);
          if (route === 'POST /v1/batch') {
            const targets = (req.body as { targets?: unknown } | undefined)?.targets;
            if (Array.isArray(targets)) {
              try {
                checkTargetCount(this.config.limits[caller.callerClass].maxTargets, targets.length, caller);
              } catch (e) {
                return next(e);
              }
            }
          }
          next();
        },
      );
    }, next);
  };
}
