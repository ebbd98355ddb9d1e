import type { CallerClass } from '../config/app-config';
import type { AddressCheck } from '../fetch/address-check';
import type { ProxyGate } from './render-proxy';

/**
 * Where one render's page may connect, as a static fetch may: the fetcher's address check (one
 * DNS guard, on the caller's account, and one address policy) decides, and the first checked
 * address is the one the proxy connects to.
 */
export function renderGate(check: AddressCheck, callerClass: CallerClass, who: string): ProxyGate {
  return {
    async address(host: string, signal: AbortSignal): Promise<string> {
      const [first] = await check.addresses(host, callerClass, who, signal);
      return first;
    },
  };
}
