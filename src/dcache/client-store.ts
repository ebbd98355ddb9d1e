import type { Kysely } from 'kysely';
import type { Tables } from './schema';

export interface Client {
  fingerprint: string;
  caller: string;
  callerClass: string;
  createdAt: number;
}

/** Callers created by the CLI; only the SHA-256 fingerprint of a token is ever stored. */
export class ClientStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async addClient(c: Client): Promise<void> {
    await this.db
      .insertInto('clients')
      .values({
        fingerprint: c.fingerprint,
        caller: c.caller,
        caller_class: c.callerClass,
        created_at: c.createdAt,
      })
      .execute();
  }

  async clientByFingerprint(fingerprint: string): Promise<Client | undefined> {
    const r = await this.db
      .selectFrom('clients')
      .selectAll()
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirst();
    return (
      r && {
        fingerprint: r.fingerprint,
        caller: r.caller,
        callerClass: r.caller_class,
        createdAt: r.created_at,
      }
    );
  }

  async clients(): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().orderBy('created_at').execute();
    return rows.map((r) => ({
      fingerprint: r.fingerprint,
      caller: r.caller,
      callerClass: r.caller_class,
      createdAt: r.created_at,
    }));
  }
}
