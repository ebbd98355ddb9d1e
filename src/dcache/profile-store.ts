import type { Kysely } from 'kysely';
import type { BrowserProfileTable, Tables } from './schema';

export type ProfileRow = BrowserProfileTable;

/** Browser profiles, by owner and name; every call names the owner, so no caller reads another's. */
export class ProfileStore {
  constructor(private readonly db: Kysely<Tables>) {}

  /** Creates an empty profile; false when the owner has one of that name. */
  async create(owner: string, name: string, nowMs: number): Promise<boolean> {
    const r = await this.db
      .insertInto('browser_profile')
      .values({ owner, name, state: '', bytes: 0, created_at: nowMs, updated_at: nowMs })
      .onConflict((oc) => oc.columns(['owner', 'name']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async get(owner: string, name: string): Promise<ProfileRow | undefined> {
    return this.db
      .selectFrom('browser_profile')
      .selectAll()
      .where('owner', '=', owner)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  /** The owner's profiles without their state, by name. */
  async list(owner: string): Promise<Omit<ProfileRow, 'state'>[]> {
    return this.db
      .selectFrom('browser_profile')
      .select(['owner', 'name', 'bytes', 'created_at', 'updated_at'])
      .where('owner', '=', owner)
      .orderBy('name')
      .execute();
  }

  async count(owner: string): Promise<number> {
    const r = await this.db
      .selectFrom('browser_profile')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner', '=', owner)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Stores a sealed state; false when the profile is gone (deleted meanwhile). */
  async putState(owner: string, name: string, state: string, bytes: number, nowMs: number): Promise<boolean> {
    const r = await this.db
      .updateTable('browser_profile')
      .set({ state, bytes, updated_at: nowMs })
      .where('owner', '=', owner)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(owner: string, name: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('browser_profile')
      .where('owner', '=', owner)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
