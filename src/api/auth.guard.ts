import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { checkTargetCount } from '../batch/submission';
import { Authenticator, type AuthedRequest } from './authenticator';
import { BODY_RULE, readBody, type BodyRule } from './body-limit';

export { fingerprint } from './authenticator';

/**
 * Every /v1 and /v2 route's entrance, in this order: the bearer token (401, and the body is never
 * read); then, for a route that declares its body (BodyLimit), the body within the route's limit
 * for the caller's class, and a batch's per-class target count (400 too_many_targets before any
 * DTO validation runs). The route's pipe and handler come next.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly auth: Authenticator,
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const caller = await this.auth.authenticate(req);
    const rule = this.reflector.get<BodyRule | undefined>(BODY_RULE, ctx.getHandler());
    if (!rule) return true;
    if (rule.file) await readBody(req, this.config.pdfMaxBytes, true);
    else await readBody(req, rule.limits[caller.callerClass]);
    const targets = (req.body as { targets?: unknown } | undefined)?.targets;
    if (rule.countsTargets && Array.isArray(targets)) {
      checkTargetCount(this.config.limits[caller.callerClass].maxTargets, targets.length, caller);
    }
    return true;
  }
}
