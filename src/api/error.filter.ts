import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { routeMethods } from '../tuning/express-routes';
import type { ErrorCode } from '../common/error-codes';
import { FirecrawlUnsupported } from './firecrawl/firecrawl-mapping';
import { isFirecrawlPath, unservedRoute } from './firecrawl/firecrawl-routes';
import {
  SiftError,
  isStorageFull,
  isStorageUnavailable,
  storageFull,
  storageUnavailable,
} from '../common/errors';

interface Envelope {
  status: number;
  code: ErrorCode;
  message: string;
  hint: string;
  headers?: Record<string, string>;
}

const BY_STATUS: Record<number, [ErrorCode, string]> = {
  400: ['invalid_request', 'fix the request and send it again'],
  401: ['unauthorized', 'send "Authorization: Bearer <token>"'],
  403: ['forbidden', 'this caller may not do that'],
  404: ['not_found', 'check the method and path; the API is under /v1 (see /docs)'],
  405: ['method_not_allowed', 'check the method; see /docs'],
  413: ['payload_too_large', 'send a smaller body; split large batches into several jobs'],
  415: ['unsupported_media_type', 'send the body as application/json'],
  429: ['too_many_requests', 'wait and try again'],
  503: ['server_busy', 'try again later'],
};

/** The one place errors become responses: {"error": {code, message, hint}}, never a stack trace. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request & { id?: string }>();
    const env =
      firecrawlUnserved(exception, req) ?? wrongMethod(exception, req) ?? this.envelope(exception, req.id);
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [k, v] of Object.entries(env.headers ?? {})) res.setHeader(k, v);
    // The Firecrawl-compatible API answers in Firecrawl's error shape (see src/api/firecrawl).
    if (isFirecrawlPath(req.path)) {
      res.status(env.status).json({ success: false, error: `${env.message} (${env.hint})`, code: env.code });
      return;
    }
    res.status(env.status).json({ error: { code: env.code, message: env.message, hint: env.hint } });
  }

  private envelope(err: unknown, requestId?: string): Envelope {
    if (err instanceof FirecrawlUnsupported)
      return { status: 400, code: 'invalid_request', message: err.message, hint: 'leave the field out' };
    const e = isStorageFull(err) ? storageFull() : isStorageUnavailable(err) ? storageUnavailable() : err;
    if (e instanceof SiftError)
      return { status: e.status, code: e.code, message: e.message, hint: e.hint, headers: e.headers };
    if (e instanceof HttpException) {
      const status = e.getStatus();
      const [code, hint] =
        BY_STATUS[status] ??
        (status < 500
          ? (['invalid_request', 'fix the request'] as const)
          : (['internal', 'try again later'] as const));
      const body = e.getResponse();
      const message =
        status === 404
          ? 'no such route'
          : typeof body === 'string'
            ? body
            : ((body as { message?: string }).message ?? e.message);
      return { status, code, message: String(message), hint };
    }
    this.log.error({
      request_id: requestId,
      error: e instanceof Error ? (e.stack ?? e.message) : String(e),
    });
    return {
      status: 500,
      code: 'internal',
      message: 'an internal error occurred',
      hint: `try again; if it persists, report it with the request id${requestId ? ` ${requestId}` : ''}`,
    };
  }
}

/** No route here: under Firecrawl's paths a 400 naming it, as Firecrawl's clients expect of a route it lacks. */
function firecrawlUnserved(err: unknown, req: Request): Envelope | undefined {
  if (!isRouterMiss(err) || !isFirecrawlPath(req.path)) return undefined;
  const message = unservedRoute(req.method, req.path);
  return {
    status: 400,
    code: 'invalid_request',
    message,
    hint: 'see /docs for the Firecrawl routes sift serves',
  };
}

/** The router found no route for the method and path (not a SiftError's "no such job"). */
const isRouterMiss = (err: unknown): boolean =>
  err instanceof HttpException && err.getStatus() === 404 && !(err instanceof SiftError);

/** A path that exists under other methods is 405 with Allow, not 404 "no such route". */
function wrongMethod(err: unknown, req: Request): Envelope | undefined {
  if (!isRouterMiss(err)) return undefined;
  const allow = routeMethods(req.app, req.path);
  if (allow.length === 0 || allow.includes(req.method)) return undefined;
  return {
    status: 405,
    code: 'method_not_allowed',
    message: `${req.method} is not a method of ${req.path.slice(0, 200)}`,
    hint: `use ${allow.filter((m) => m !== 'HEAD').join(' or ')} (see /docs)`,
    headers: { Allow: allow.join(', ') },
  };
}
