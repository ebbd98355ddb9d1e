import type { CallerClass } from '../config/app-config';
import { FetchError, SiftError } from '../common/errors';
import { notReachable, parseIp, type AddressPolicy } from '../fetch/address-policy';
import type { DnsGuard } from '../fetch/dns-guard';
import type { ProxyGate } from './render-proxy';
import { abortable } from '../common/abortable';

/**
 * Where one render's page may connect, as a static fetch may: an IP literal is checked as it
 * stands; a name is resolved once through the DNS guard (on the caller's account), every address
 * it has is checked with the caller's policy, and the first is the one the proxy connects to.
 */
export function renderGate(
  dns: DnsGuard,
  policy: AddressPolicy,
  callerClass: CallerClass,
  who: string,
): ProxyGate {
  return {
    async address(host: string, signal: AbortSignal): Promise<string> {
      const bare = host.replace(/^\[|\]$/g, '');
      if (parseIp(bare)) {
        policy.check(host, [bare], callerClass);
        return bare;
      }
      let addrs: { address: string }[];
      try {
        addrs = await abortable(dns.resolve(host, who), signal);
      } catch (err) {
        throw unresolved(err instanceof SiftError ? err : undefined, host, callerClass);
      }
      if (addrs.length === 0) throw unresolved(undefined, host, callerClass);
      policy.check(
        host,
        addrs.map((a) => a.address),
        callerClass,
      );
      return addrs[0].address;
    },
  };
}

/** A restricted caller is told of a name that does not resolve what it is told of a private one. */
function unresolved(err: SiftError | undefined, host: string, callerClass: CallerClass): SiftError {
  if (err && err.code !== 'dns_error') return err;
  if (callerClass === 'restricted') return notReachable(host, true);
  return err ?? new FetchError('dns_error', `${host} did not resolve`);
}
