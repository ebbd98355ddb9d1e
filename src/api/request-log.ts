import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

const ID = /^[\w.:-]{1,128}$/;
const log = new Logger('http');

/**
 * Gives every request an id (the caller's X-Request-Id when it is sane, a new one otherwise),
 * returns it as X-Request-Id, and logs one line per answered request.
 */
export function requestLog(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && ID.test(given) ? given : randomUUID();
  (req as Request & { id: string }).id = id;
  res.setHeader('X-Request-Id', id);
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    log.log({
      request_id: id,
      method: req.method,
      path: req.path,
      status: res.statusCode,
      ms: Math.round(ms * 10) / 10,
    });
  });
  next();
}
