/**
 * robots.txt rules as RFC 9309 reads them, for one agent, parsed and matched in linear time.
 *
 * The file's groups for the agent (else `*`) are kept, and its Sitemap lines (which belong to no
 * group), nothing else: a file that names thousands of agents per group costs what its lines cost,
 * not lines × agents. A path is matched against each rule by its literal pieces between `*`s, each
 * found left to right with one string search (the leftmost match of each piece is never worse than
 * a later one), so a rule costs at most one pass over the path however many `*`s it has. Longest rule wins; Allow wins a tie.
 */

/**
 * Rules whose `*`s leave a piece to search for past the first (`/a*b`, not `/a*`) cost a pass over
 * the path each; a group keeps this many. Past them a Disallow is cut at its first `*` (it then
 * disallows more, never less) and an Allow is ignored: a check costs at most this many passes over
 * the path, plus a prefix comparison per other rule (the file's 500 KiB bound their count).
 */
export const MAX_SEARCHED_RULES = 1000;
/**
 * The longest rule value read (Google's parser cuts its lines there). Longer, a Disallow is cut
 * (it then disallows more) and an Allow is ignored (cut, it would allow more than it says).
 */
export const MAX_RULE_CHARS = 16_664;
/** Sitemap lines kept from a file; the rest are ignored. */
export const MAX_SITEMAPS = 50;
/** A longer Sitemap value is ignored (the sitemap protocol's longest URL). */
export const MAX_SITEMAP_CHARS = 2048;
/** A quoted rule, in an error message, is at most this long. */
const QUOTE_CHARS = 200;

export interface Rule {
  allow: boolean;
  /** Length of the rule's (normalised) path pattern: the longest match wins. */
  length: number;
  /** The pattern's literal pieces, split at `*` (runs of `*` collapsed). */
  pieces: string[];
  /** The pattern ended in `$`: the last piece must end the path. */
  anchored: boolean;
  /** 1-based line of the file. */
  line: number;
  /** The line as written (comment removed), for the caller's error message. */
  text: string;
}

export interface AgentRules {
  rules: Rule[];
  /** Seconds, when the group says. */
  crawlDelayS?: number;
  /** The file's `Sitemap:` values, whatever their group, in file order (not checked as URLs). */
  sitemaps: string[];
  /** A rough count of the bytes these rules hold in memory. */
  bytes: number;
}

interface Group {
  seen: boolean;
  rules: Rule[];
  searched: number;
  crawlDelayS?: number;
}

/**
 * The rules of `agent`'s group (several groups naming it are one), else of `*`, else none; and
 * the first MAX_SITEMAPS Sitemap values of at most MAX_SITEMAP_CHARS, anywhere in the file.
 */
export function parseRobots(body: string, agent: string): AgentRules {
  const me = productToken(agent);
  const mine: Group = { seen: false, rules: [], searched: 0 };
  const star: Group = { seen: false, rules: [], searched: 0 };
  const sitemaps: string[] = [];
  let groups: Group[] = [];
  let inAgents = false;
  const lines = body.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const hash = lines[i].indexOf('#');
    const line = hash >= 0 ? lines[i].slice(0, hash) : lines[i];
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    const field = key.toLowerCase();
    if (field === 'user-agent') {
      if (!inAgents) groups = [];
      inAgents = true;
      const token = productToken(value);
      if (value && token === me && !groups.includes(mine)) groups.push(mine);
      if (value && token === '*' && !groups.includes(star)) groups.push(star);
      continue;
    }
    inAgents = false;
    if (field === 'allow' || field === 'disallow') {
      for (const g of groups) {
        g.seen = true;
        if (!value) continue;
        const allow = field === 'allow';
        if (allow && value.length > MAX_RULE_CHARS) continue;
        const rule = compile(allow, value, i + 1, key);
        if (searches(rule) && ++g.searched > MAX_SEARCHED_RULES) {
          if (allow) continue;
          rule.pieces = [rule.pieces[0]];
          rule.anchored = false;
        }
        g.rules.push(rule);
      }
    } else if (field === 'sitemap') {
      // The value's own `#` went with the comment: a sitemap URL has no use for a fragment.
      if (value && value.length <= MAX_SITEMAP_CHARS && sitemaps.length < MAX_SITEMAPS) sitemaps.push(value);
    } else if (field === 'crawl-delay') {
      const delay = Number(value);
      for (const g of groups) {
        g.seen = true;
        if (!Number.isNaN(delay)) g.crawlDelayS = delay;
      }
    }
  }
  const g = mine.seen ? mine : star.seen ? star : { rules: [], crawlDelayS: undefined };
  const ruleBytes = g.rules.reduce((n, r) => n + 2 * (r.text.length + r.length) + 96, 64);
  const bytes = sitemaps.reduce((n, s) => n + 2 * s.length + 32, ruleBytes);
  return { rules: g.rules, crawlDelayS: g.crawlDelayS, sitemaps, bytes };
}

/** The rule that decides `url`'s path, undefined when none matches (allowed). */
export function decidingRule(rules: AgentRules, url: URL): Rule | undefined {
  const path = upperEscapes(url.pathname + url.search);
  let best: Rule | undefined;
  for (const r of rules.rules) {
    if (best && (r.length < best.length || (r.length === best.length && (best.allow || !r.allow)))) continue;
    if (matches(r, path)) best = r;
  }
  return best;
}

/** The rule needs a search of the path (an anchored last piece is compared, not searched). */
function searches(r: Rule): boolean {
  const last = r.pieces.length - 1;
  return r.pieces.some((p, i) => i > 0 && p !== '' && (i < last || !r.anchored));
}

function matches(r: Rule, path: string): boolean {
  const { pieces, anchored } = r;
  if (!path.startsWith(pieces[0])) return false;
  const last = pieces.length - 1;
  if (last === 0) return !anchored || path.length === pieces[0].length;
  let at = pieces[0].length;
  for (let i = 1; i < last; i++) {
    const found = path.indexOf(pieces[i], at);
    if (found < 0) return false;
    at = found + pieces[i].length;
  }
  const tail = pieces[last];
  if (anchored) return path.length - tail.length >= at && path.endsWith(tail);
  return path.indexOf(tail, at) >= 0;
}

function compile(allow: boolean, value: string, line: number, key: string): Rule {
  const pattern = normalise(value.slice(0, MAX_RULE_CHARS));
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const pieces = body.split('*').filter((p, i, all) => p !== '' || i === 0 || i === all.length - 1);
  return {
    allow,
    length: pattern.length,
    pieces,
    anchored,
    line,
    text: `${key}: ${value}`.slice(0, QUOTE_CHARS),
  };
}

/** The product token of a user-agent value: lower case, up to a `/` version. */
function productToken(ua: string): string {
  const lower = ua.toLowerCase();
  const slash = lower.indexOf('/');
  return (slash >= 0 ? lower.slice(0, slash) : lower).trim();
}

/** A pattern's characters percent-encoded as a URL path's are, escapes in upper case. */
function normalise(pattern: string): string {
  try {
    return upperEscapes(encodeURI(pattern).replace(/%25/g, '%'));
  } catch {
    return pattern;
  }
}

function upperEscapes(s: string): string {
  return s.replace(/%[0-9a-fA-F]{2}/g, (m) => m.toUpperCase());
}
