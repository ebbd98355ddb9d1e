import * as ipaddr from 'ipaddr.js';
import type { CallerClass } from '../config/app-config';
import { FetchError, SiftError } from '../common/errors';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/** IPv6 forms that carry an IPv4 address: the IPv4 inside is what gets reached. */
function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = a.range();
  const b = a.toByteArray();
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052': // NAT64 64:ff9b::/96
      return new ipaddr.IPv4(b.slice(12, 16));
    case '6to4': // 2002:AABB:CCDD::/48
      return new ipaddr.IPv4(b.slice(2, 6));
    case 'teredo': // client address, inverted, in the last 32 bits
      return new ipaddr.IPv4(b.slice(12, 16).map((x) => x ^ 0xff));
    default:
      // IPv4-compatible ::a.b.c.d (deprecated but still routed by some stacks)
      if (b.slice(0, 12).every((x) => x === 0) && !b.slice(12).every((x) => x === 0)) {
        return new ipaddr.IPv4(b.slice(12, 16));
      }
      return undefined;
  }
}

/**
 * Ranges ipaddr.js calls unicast that are not reachable on the public internet.
 * 64:ff9b:1::/48 is the local-use NAT64 prefix (RFC 8215): a translator inside the network.
 */
const NOT_PUBLIC_V6: [ipaddr.IPv6, number][] = [ipaddr.IPv6.parseCIDR('64:ff9b:1::/48')];

/** ipaddr.js classification (a kept library) decides; only global unicast is public. */
function isPublic(a: Addr): boolean {
  if (a.kind() === 'ipv6') {
    const v6 = a as ipaddr.IPv6;
    if (NOT_PUBLIC_V6.some(([net, bits]) => v6.match(net, bits))) return false;
    const inner = embeddedIPv4(v6);
    if (inner) return inner.range() === 'unicast';
    return v6.range() === 'unicast';
  }
  return a.range() === 'unicast';
}

/** Parses an IP literal in any spelling the WHATWG URL parser or the resolver may hand us. */
export function parseIp(s: string): Addr | undefined {
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  const noZone = bare.replace(/%.*$/, '');
  if (!ipaddr.isValid(noZone)) return undefined;
  try {
    return ipaddr.parse(noZone);
  } catch {
    return undefined;
  }
}

/**
 * Who may reach which address. Restricted callers reach public unicast addresses only; fleet
 * callers also reach non-public ones inside SIFT_FLEET_ALLOW.
 */
export class AddressPolicy {
  constructor(private readonly fleetAllow: [Addr, number][]) {}

  allowed(ip: string, callerClass: CallerClass): boolean {
    const a = parseIp(ip);
    if (!a) return false;
    if (isPublic(a)) return true;
    if (callerClass !== 'fleet') return false;
    const candidates: Addr[] = [a];
    if (a.kind() === 'ipv6') {
      const inner = embeddedIPv4(a as ipaddr.IPv6);
      if (inner) candidates.push(inner);
    }
    return candidates.some((c) =>
      this.fleetAllow.some(([net, bits]) => c.kind() === net.kind() && c.match(net, bits)),
    );
  }

  /**
   * Throws blocked_address unless every given address may be reached. A restricted caller is told
   * the host only, in the words a name that does not resolve gets (see notReachable): the address
   * it resolved to would map the internal network for an outsider.
   */
  check(host: string, ips: string[], callerClass: CallerClass): void {
    for (const ip of ips) {
      if (this.allowed(ip, callerClass)) continue;
      if (callerClass !== 'fleet') throw notReachable(host);
      throw new SiftError(
        403,
        'blocked_address',
        `${host} resolves to ${ip}, which this caller may not reach`,
        `to let fleet callers reach it, add the address or its network to SIFT_FLEET_ALLOW (e.g. SIFT_FLEET_ALLOW=${ip.includes(':') ? `${ip}/128` : `${ip}/32`}) and restart`,
      );
    }
  }
}

/**
 * What a restricted caller is told of a name it may not reach and of one that does not resolve
 * alike: telling them apart would let an outsider list the internal names.
 */
export const notReachable = (host: string, unresolved = false) =>
  Object.assign(new FetchError('blocked_address', `${host} is not reachable for this caller`), {
    /** The name did not resolve (now): sift's own retries may try again; the caller is not told. */
    unresolved,
  });

/** A blocked_address that is really a name that did not resolve (see notReachable). */
export const isUnresolved = (err: unknown): boolean =>
  (err as { unresolved?: boolean } | undefined)?.unresolved === true;

/**
 * A restricted caller is told of a name that does not resolve what it is told of a private one.
 * The address check (see AddressCheck) answers so for its own lookups; this holds the rule for a
 * dns_error from anywhere else on the way to the caller.
 */
export function forCaller(err: SiftError, url: URL, callerClass: CallerClass): SiftError {
  return callerClass === 'restricted' && err.code === 'dns_error' ? notReachable(url.hostname, true) : err;
}
