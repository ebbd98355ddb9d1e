import { hash, timingSafeEqual } from 'node:crypto';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig, type CallerClass } from '../config/app-config';
import { SiftError } from '../common/errors';
import { ClientStore } from '../dcache';
import type { Caller } from '../fetch/fetch.service';

export function fingerprint(token: string): string {
  return hash('sha256', token, 'hex');
}

const unauthorized = (message: string) =>
  new SiftError(
    401,
    'unauthorized',
    message,
    'send "Authorization: Bearer <token>" with a token sift knows',
    {
      'WWW-Authenticate': 'Bearer',
    },
  );

/** Maps the bearer token to a caller and its class, from SIFT_TOKENS and the clients table. */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly configured: { digest: Buffer; caller: Caller }[];

  constructor(
    config: AppConfig,
    private readonly clients: ClientStore,
  ) {
    this.configured = config.tokens.map((t) => ({
      digest: Buffer.from(fingerprint(t.token), 'hex'),
      caller: { name: t.caller, callerClass: t.callerClass },
    }));
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<Request & { caller?: Caller }>();
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) throw unauthorized('a bearer token is required');
    const fp = fingerprint(m[1]);
    const digest = Buffer.from(fp, 'hex');
    // Compare against every configured token, in constant time each, whatever matches.
    let found: Caller | undefined;
    for (const c of this.configured) {
      if (timingSafeEqual(c.digest, digest) && !found) found = c.caller;
    }
    if (!found) {
      const client = await this.clients.clientByFingerprint(fp);
      if (client) found = { name: client.caller, callerClass: client.callerClass as CallerClass };
    }
    if (!found) throw unauthorized('the bearer token is not known');
    req.caller = found;
    return true;
  }
}
