import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Authenticator, type AuthedRequest } from './authenticator';

export { fingerprint } from './authenticator';

/**
 * Every /v1 route: the request gate has already authenticated the caller before reading any body;
 * the guard holds the same line for a route reached any other way.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(private readonly auth: Authenticator) {}

  canActivate(ctx: ExecutionContext): boolean | Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    if (req.caller) return true;
    return this.auth.authenticate(req).then(() => true);
  }
}
