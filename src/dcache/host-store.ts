import { sql, type Kysely } from 'kysely';
import type { Tables, RobotsTxtTable } from './schema';

export type RobotsRow = RobotsTxtTable;

/** The bytes of robots.txt bodies kept in the database, over every origin. */
export const ROBOTS_MAX_STORED = 64 * 1024 * 1024;

/**
 * What sift knows of each site, shared by every instance: its robots.txt (per origin) and its
 * host's state (a backoff pause asked for by a 429/503, and the next slot a Crawl-delay allows).
 */
export class HostStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async robots(origin: string): Promise<RobotsRow | undefined> {
    return this.db.selectFrom('robots_txt').selectAll().where('origin', '=', origin).executeTakeFirst();
  }

  async putRobots(r: RobotsRow): Promise<void> {
    await this.db
      .insertInto('robots_txt')
      .values(r)
      .onConflict((oc) =>
        oc.column('origin').doUpdateSet({
          kind: r.kind,
          status: r.status,
          body: r.body,
          fetched_at: r.fetched_at,
          expires_at: r.expires_at,
        }),
      )
      .execute();
  }

  /** ms until which the host is paused (0 when it is not). */
  async pausedUntil(host: string): Promise<number> {
    const r = await this.db
      .selectFrom('host_state')
      .select('paused_until')
      .where('host', '=', host)
      .executeTakeFirst();
    return Number(r?.paused_until ?? 0);
  }

  /** Pauses the host until `untilMs` (a later pause already set stands). */
  async pauseHost(host: string, untilMs: number): Promise<void> {
    await this.db
      .insertInto('host_state')
      .values({ host, paused_until: untilMs, next_at: 0 })
      .onConflict((oc) =>
        oc.column('host').doUpdateSet({
          paused_until: sql<number>`CASE WHEN host_state.paused_until > ${untilMs} THEN host_state.paused_until ELSE ${untilMs} END`,
        }),
      )
      .execute();
  }

  /**
   * Takes the host's Crawl-delay turn if it is due (`next_at` at or before now), setting the next
   * one `delayMs` from now, in one statement: two instances never take the same turn. Returns
   * undefined when taken, else when (ms) the turn someone else took lets the next one go.
   */
  async takeTurn(host: string, delayMs: number, nowMs: number): Promise<number | undefined> {
    const taken = await this.db
      .insertInto('host_state')
      .values({ host, paused_until: 0, next_at: nowMs + delayMs })
      .onConflict((oc) =>
        oc
          .column('host')
          .doUpdateSet({ next_at: nowMs + delayMs })
          .where('host_state.next_at', '<=', nowMs),
      )
      .returning('next_at')
      .executeTakeFirst();
    if (taken) return undefined;
    const r = await this.db
      .selectFrom('host_state')
      .select('next_at')
      .where('host', '=', host)
      .executeTakeFirst();
    return Number(r?.next_at ?? 0);
  }

  /**
   * Forgets what is no longer in force: robots.txt rows expired before `nowS` (a later request
   * fetches the file again) or, past `robotsMaxBytes` of bodies, fetched longest ago; and hosts
   * neither paused nor waiting out a Crawl-delay at `nowMs`.
   * Returns the rows deleted.
   */
  async sweep(
    nowS: number,
    nowMs: number,
    robotsMaxBytes = ROBOTS_MAX_STORED,
  ): Promise<{ robots: number; hosts: number }> {
    const expired = await this.db.deleteFrom('robots_txt').where('expires_at', '<', nowS).executeTakeFirst();
    // Over the bound, the files fetched longest ago go first (a later request fetches one again).
    const sizes = await this.db
      .selectFrom('robots_txt')
      .select(['origin', sql<number>`octet_length(body)`.as('n')])
      .orderBy('fetched_at', 'desc')
      .orderBy('origin')
      .execute();
    let total = 0;
    const over = sizes.filter((r) => (total += Number(r.n)) > robotsMaxBytes).map((r) => r.origin);
    for (let i = 0; i < over.length; i += 500) {
      await this.db
        .deleteFrom('robots_txt')
        .where('origin', 'in', over.slice(i, i + 500))
        .execute();
    }
    const hosts = await this.db
      .deleteFrom('host_state')
      .where('paused_until', '<', nowMs)
      .where('next_at', '<', nowMs)
      .executeTakeFirst();
    return { robots: Number(expired.numDeletedRows) + over.length, hosts: Number(hosts.numDeletedRows) };
  }
}
