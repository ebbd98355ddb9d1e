import { hash, timingSafeEqual } from 'node:crypto';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { AppConfig, isLoopbackHost } from '../config/app-config';
import { SiftError, forbidden } from '../common/errors';
import { Authenticator, type AuthedRequest } from './authenticator';

const digest = (token: string) => hash('sha256', token, 'buffer');

const unauthorized = () =>
  new SiftError(
    401,
    'unauthorized',
    '/metrics from beyond this machine needs a bearer token',
    'send "Authorization: Bearer <SIFT_METRICS_TOKEN or a fleet token>", or scrape from loopback',
  ).withHeader('WWW-Authenticate', 'Bearer');

/**
 * /metrics: open to this machine (a peer address in 127.0.0.0/8 or ::1, IPv4-mapped included, as
 * the socket says it: X-Forwarded-For is never read); from anywhere else it needs
 * `Authorization: Bearer` with SIFT_METRICS_TOKEN or a fleet caller's token (401 without a known
 * token, 403 for a restricted caller's).
 */
@Injectable()
export class MetricsGuard implements CanActivate {
  private readonly metricsToken?: Buffer;

  constructor(
    private readonly auth: Authenticator,
    config: AppConfig,
  ) {
    if (config.metricsToken) this.metricsToken = digest(config.metricsToken);
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    if (isLoopbackHost(req.socket.remoteAddress ?? '')) return true;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) throw unauthorized();
    if (this.metricsToken && timingSafeEqual(this.metricsToken, digest(m[1]))) return true;
    const caller = await this.auth.authenticate(req).catch((e: unknown) => {
      throw e instanceof SiftError && e.status === 401 ? unauthorized() : e;
    });
    if (caller.callerClass !== 'fleet') {
      throw forbidden(
        `/metrics is not open to a ${caller.callerClass} caller`,
        'scrape with SIFT_METRICS_TOKEN or a fleet token',
      );
    }
    return true;
  }
}
