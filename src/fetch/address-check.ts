import type { LookupAddress } from 'node:dns';
import type { CallerClass } from '../config/app-config';
import { FetchError, SiftError } from '../common/errors';
import { abortable } from '../common/abortable';
import { notReachable, parseIp, type AddressPolicy } from './address-policy';
import { DnsGuard, type DnsGuardOptions, type Resolver } from './dns-guard';

/** A connection's lookup as undici's Agent hands it to net.connect. */
export type ConnectionLookup = (
  hostname: string,
  options: { all?: boolean },
  cb: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export interface AddressCheckOptions {
  policy: AddressPolicy;
  resolver: Resolver;
  dns: DnsGuardOptions;
}

/** An empty answer reads as getaddrinfo's "no such name". */
const NO_ADDRESS = { code: 'ENOTFOUND' };

/**
 * The one address check (SPEC "One address check"): the fetcher, the render proxy and anything
 * else that connects for a caller ask it first, so one DNS guard and one address policy decide,
 * and a caller is told the same thing whichever path refused it.
 */
export class AddressCheck {
  readonly dns: DnsGuard;
  readonly policy: AddressPolicy;

  constructor(o: AddressCheckOptions) {
    this.policy = o.policy;
    this.dns = new DnsGuard(o.resolver, o.dns);
  }

  /**
   * The addresses `host` may be reached at by this caller, before any connection: an IP literal
   * as it stands (brackets stripped; nothing looks one up), a name resolved once through the DNS
   * guard on `caller`'s account and every address it has checked. The fetch's own abort passes
   * as it is; a name that does not resolve is refused as `unresolved` says.
   */
  async addresses(
    host: string,
    callerClass: CallerClass,
    caller: string,
    signal: AbortSignal,
  ): Promise<string[]> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (parseIp(bare)) {
      this.policy.check(host, [bare], callerClass);
      return [bare];
    }
    let answer: LookupAddress[];
    try {
      answer = await abortable(this.dns.resolve(host, caller), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw unresolved(host, callerClass, err);
    }
    return this.checked(host, answer, callerClass).map((a) => a.address);
  }

  /**
   * The lookup of a connection undici opens for this caller class: the answer `addresses` just
   * waited for (pinned: no second lookup that DNS rebinding could answer differently), else a
   * fresh one outside any caller's cap, checked the same way.
   */
  lookupFor(callerClass: CallerClass): ConnectionLookup {
    return (hostname, options, cb) => {
      this.dns
        .forConnection(hostname)
        .catch((err: unknown) => {
          throw unresolved(hostname, callerClass, err);
        })
        .then((answer) => this.checked(hostname, answer, callerClass))
        .then(
          (addrs) => (options.all ? cb(null, addrs) : cb(null, addrs[0].address, addrs[0].family)),
          (err: Error) => cb(err, ''),
        );
    };
  }

  /** The answer, once every address in it is one this caller may reach. */
  private checked(host: string, answer: LookupAddress[], callerClass: CallerClass): LookupAddress[] {
    if (answer.length === 0) throw unresolved(host, callerClass, NO_ADDRESS);
    this.policy.check(
      host,
      answer.map((a) => a.address),
      callerClass,
    );
    return answer;
  }
}

/**
 * What a caller is told of a name that did not resolve (an empty answer, a resolver's error, the
 * guard's deadline): a fleet caller dns_error; a restricted one what a private address gets
 * (see notReachable), since telling the two apart would let an outsider list the internal names.
 * A SiftError other than dns_error passes as it is.
 */
function unresolved(host: string, callerClass: CallerClass, err: unknown): SiftError {
  if (err instanceof SiftError && err.code !== 'dns_error') return err;
  if (callerClass !== 'fleet') return notReachable(host, true);
  if (err instanceof SiftError) return err;
  const code = (err as { code?: unknown } | undefined)?.code;
  return new FetchError(
    'dns_error',
    `${host} did not resolve${typeof code === 'string' ? ` (${code})` : ''}`,
  );
}
