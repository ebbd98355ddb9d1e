import { hash, timingSafeEqual } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig, type CallerClass, type TokenEntry } from '../config/app-config';
import { SiftError } from '../common/errors';
import { ClientStore, type Client } from '../dcache';
import type { Caller } from '../pages/caller-policy';

export function fingerprint(token: string): string {
  return hash('sha256', token, 'hex');
}

export type AuthedRequest = Request & { caller?: Caller };

const unauthorized = (message: string) =>
  new SiftError(
    401,
    'unauthorized',
    message,
    'send "Authorization: Bearer <token>" with a token sift knows',
  ).withHeader('WWW-Authenticate', 'Bearer');

/**
 * A caller name that appears with two classes, across SIFT_TOKENS and the clients table, or
 * undefined. Jobs belong to a caller name, so one name with two classes would let a restricted
 * token read a fleet caller's jobs.
 */
export function callerClassClash(
  tokens: Pick<TokenEntry, 'caller' | 'callerClass'>[],
  clients: Pick<Client, 'caller' | 'callerClass'>[],
): string | undefined {
  const classOf = new Map<string, string>();
  for (const c of [...tokens, ...clients]) {
    const seen = classOf.get(c.caller);
    if (seen && seen !== c.callerClass) {
      return `caller "${c.caller}" is both ${seen} and ${c.callerClass} (SIFT_TOKENS and the clients table): a caller name has one class`;
    }
    classOf.set(c.caller, c.callerClass);
  }
  return undefined;
}

/** Maps a bearer token to its caller and class, from SIFT_TOKENS and the clients table. */
/** Why a server with no token at all does not start, and what to do. */
export const NO_TOKENS =
  'no token is configured (SIFT_TOKENS is empty and no caller was made with `sift token create`): every request would be 401; ' +
  'set SIFT_TOKENS=token:caller:fleet|restricted in .env (.env.example has a development one), ' +
  'or create one: node dist/src/cli.js token create CALLER --class fleet';

@Injectable()
export class Authenticator implements OnModuleInit {
  private readonly configured: { digest: Buffer; caller: Caller }[];

  constructor(
    private readonly config: AppConfig,
    private readonly clients: ClientStore,
  ) {
    this.configured = config.tokens.map((t) => ({
      digest: Buffer.from(fingerprint(t.token), 'hex'),
      caller: { name: t.caller, callerClass: t.callerClass },
    }));
  }

  /**
   * Start-up refuses a caller name that has two classes, and a server no token opens: every
   * request would be 401 (a .env that sets only PORT, say, leaves SIFT_TOKENS empty).
   */
  async onModuleInit(): Promise<void> {
    const clients = await this.clients.clients();
    const clash = callerClassClash(this.config.tokens, clients);
    if (clash) throw new Error(clash);
    if (this.config.tokens.length === 0 && clients.length === 0) throw new Error(NO_TOKENS);
  }

  /** The request's caller (resolved once per request); 401 without a known bearer token. */
  async authenticate(req: AuthedRequest): Promise<Caller> {
    if (req.caller) return req.caller;
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
    return found;
  }
}
