/**
 * Firecrawl's fields for reaching a page (its actions, its proxy and location) as sift's: the
 * actions field for field, a proxy by the operator's names.
 */
import { FirecrawlUnsupported } from './firecrawl-unsupported';

type Body = Record<string, unknown>;

/**
 * Firecrawl's actions are sift's, name for name and field for field; what sift does not take is
 * named: `pdf`, and a screenshot's `quality` and `viewport` (sift's are PNGs of its viewport).
 */
export function actionsOf(actions: unknown, where: string): unknown {
  if (!Array.isArray(actions)) return actions; // sift's check names what it must be
  for (const [i, a] of (actions as unknown[]).entries()) {
    const o = (typeof a === 'object' && a !== null ? a : {}) as Body;
    if (o.type === 'pdf') throw new FirecrawlUnsupported(`${where}actions.${i}: pdf`);
    for (const k of ['quality', 'viewport'])
      if (o.type === 'screenshot' && o[k] !== undefined)
        throw new FirecrawlUnsupported(`${where}actions.${i}.${k}`);
  }
  return actions;
}

/**
 * Firecrawl's `proxy` and `location.country` name one of the operator's proxies (SIFT_PROXIES):
 * `proxy: "stealth"` the proxy named stealth, `location: {country: "US"}` the one named us.
 * "basic" (Firecrawl's default) is a direct connection unless a proxy is named so. Any other
 * value, or a country with no proxy, is 400 naming the field.
 */
export function proxyOf(body: Body, where: string, proxies: ReadonlySet<string>): string | undefined {
  const loc = body.location;
  if (loc !== undefined) {
    const l = (typeof loc === 'object' && loc !== null ? loc : {}) as Body;
    const extra = Object.keys(l).find((k) => k !== 'country');
    if (extra) throw new FirecrawlUnsupported(`${where}location.${extra.slice(0, 40)}`);
    if (typeof l.country !== 'string')
      throw new FirecrawlUnsupported(`${where}location.country`, 'must be a country code');
    const name = l.country.toLowerCase();
    if (!proxies.has(name))
      throw new FirecrawlUnsupported(
        `${where}location.country`,
        `"${l.country.slice(0, 8)}": no proxy of this server is named ${name}`,
      );
    if (body.proxy !== undefined && body.proxy !== name && body.proxy !== 'basic')
      throw new FirecrawlUnsupported(`${where}proxy`, 'names another proxy than location.country');
    return name;
  }
  const p = body.proxy;
  if (p === undefined || (p === 'basic' && !proxies.has('basic'))) return undefined;
  if (typeof p !== 'string' || !proxies.has(p))
    throw new FirecrawlUnsupported(
      `${where}proxy`,
      `"${String(p).slice(0, 40)}": no proxy of this server is named so`,
    );
  return p;
}

/** Firecrawl's `profile: {name, saveChanges}` is sift's `profile: {name, save}`. */
export function profileOf(profile: unknown, where: string): unknown {
  if (typeof profile !== 'object' || profile === null || Array.isArray(profile)) return profile;
  const { saveChanges, ...rest } = profile as Body;
  const extra = Object.keys(rest).find((k) => k !== 'name');
  if (extra) throw new FirecrawlUnsupported(`${where}profile.${extra.slice(0, 40)}`);
  return { ...rest, ...(saveChanges !== undefined ? { save: saveChanges } : {}) };
}
