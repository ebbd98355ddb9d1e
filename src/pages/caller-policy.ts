import { SiftError, forbidden, invalidRequest } from '../common/errors';
import type { CallerClass } from '../config/app-config';
import type { EgressProxy } from '../config/parsers';

/** Who asks: a token's name and its class (fleet is trusted; restricted never reaches a private address). */
export interface Caller {
  name: string;
  callerClass: CallerClass;
}

/** Headers sift sets itself or that would change the transport; callers may not send them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
  'expect',
]);

/**
 * The caller's own request headers, lower-cased and sorted (they are part of the cache key):
 * fleet callers only, and none that sift sets itself.
 */
export function checkHeaders(
  caller: Caller,
  headers: Record<string, string> | undefined,
): Record<string, string> {
  if (!headers || Object.keys(headers).length === 0) return {};
  if (caller.callerClass !== 'fleet') {
    throw forbidden(
      'restricted callers may not send custom request headers',
      'send the request without "headers"',
    );
  }
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers).sort()) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-')) {
      throw new SiftError(
        400,
        'invalid_request',
        `header "${name}" is set by sift and may not be sent`,
        'remove it from "headers"',
      );
    }
    out[lower] = headers[name];
  }
  return out;
}

/** robots: false is for fleet callers only (403 for a restricted one); true unless turned off. */
export function checkRobotsOption(caller: Caller, robots: boolean | undefined): boolean {
  if (robots === false && caller.callerClass !== 'fleet') {
    throw forbidden('restricted callers may not turn robots.txt off', 'remove "robots": false');
  }
  return robots !== false;
}

/** What a call's options ask of the browser. */
export interface RenderAsk {
  render?: 'never' | 'auto' | 'always';
  screenshot?: boolean;
  full_page?: boolean;
  actions?: { type: string }[];
  profile?: { save?: boolean };
}

/**
 * How a call renders: a screenshot is taken of a rendered page and actions are taken on one, so
 * asking either renders the page (`auto` becomes `always`); with render "never" it is refused,
 * never dropped without a word. `where` names the options in the refusal (a batch's target).
 */
export function renderModeOf(p: RenderAsk, where = ''): 'never' | 'auto' | 'always' {
  if (p.full_page === true && p.screenshot !== true)
    throw invalidRequest(
      `${where}full_page is the extent of a screenshot: it goes with screenshot: true`,
      'send screenshot: true with full_page, or leave full_page out',
    );
  const needs =
    p.screenshot === true
      ? 'screenshot is'
      : p.actions?.length
        ? 'actions are'
        : p.profile?.save === true
          ? 'profile.save is'
          : undefined;
  if (!needs) return p.render ?? 'auto';
  if (p.render === 'never') {
    throw invalidRequest(
      `${where}${needs} taken ${p.screenshot === true ? 'of' : 'on'} the rendered page: it cannot be asked with render "never"`,
      `send render "auto" or "always" with ${needs.split(' ')[0]}, or leave ${needs.split(' ')[0]} out`,
    );
  }
  return 'always';
}

/**
 * A page's own script (`executeJavascript`) runs only for fleet callers, and only where the
 * operator allows it (SIFT_ALLOW_PAGE_SCRIPTS=1): 403 otherwise, naming which.
 */
export function checkPageScripts(caller: Caller, p: RenderAsk, allowed: boolean, where = ''): void {
  const i = p.actions?.findIndex((a) => a.type === 'executeJavascript') ?? -1;
  if (i < 0) return;
  if (caller.callerClass !== 'fleet')
    throw forbidden(
      `${where}actions.${i}: restricted callers may not run scripts in a page`,
      'take the page with the other actions (click, write, press, scroll, wait)',
    );
  if (!allowed)
    throw forbidden(
      `${where}actions.${i}: scripts in a page are off on this server`,
      'the operator turns them on for fleet callers with SIFT_ALLOW_PAGE_SCRIPTS=1',
    );
}

/** What the operator allows of options beyond a class's limits: page scripts, egress proxies. */
export interface OptionRules {
  pageScripts: boolean;
  proxies: ReadonlyMap<string, EgressProxy>;
  /** The proxy names each class may use, or `*` for all. */
  classProxies: Record<CallerClass, string[] | '*'>;
}

/**
 * The egress proxy a call names (`proxy`), if any: 400 for a name the server does not have, 403
 * for one the caller's class may not use (SIFT_<CLASS>_PROXIES).
 */
export function proxyOf(
  caller: Caller,
  name: string | undefined,
  rules: OptionRules,
  where = '',
): EgressProxy | undefined {
  if (name === undefined) return undefined;
  const allowed = rules.classProxies[caller.callerClass];
  const mayUse = (n: string) => allowed === '*' || allowed.includes(n);
  const p = rules.proxies.get(name);
  if (!p) {
    const names = [...rules.proxies.keys()].filter(mayUse);
    throw invalidRequest(
      `${where}proxy "${name.slice(0, 64)}" is not a proxy of this server`,
      names.length
        ? `name one of: ${names.join(', ')}`
        : 'this server names no proxy this caller may use; leave proxy out',
    );
  }
  if (!mayUse(name))
    throw forbidden(
      `${where}proxy "${name}" is not one ${caller.callerClass} callers may use`,
      `the operator lists the proxies of each class in SIFT_${caller.callerClass.toUpperCase()}_PROXIES`,
    );
  return p;
}

/** The operator's rules for options, from the configuration. */
export function optionRulesOf(c: {
  allowPageScripts: boolean;
  proxies: ReadonlyMap<string, EgressProxy>;
  limits: Record<CallerClass, { proxies: string[] | '*' }>;
}): OptionRules {
  return {
    pageScripts: c.allowPageScripts,
    proxies: c.proxies,
    classProxies: { fleet: c.limits.fleet.proxies, restricted: c.limits.restricted.proxies },
  };
}
