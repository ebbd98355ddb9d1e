import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { invalidRequest, notFound, SiftError } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { callerKeyOf, ProfileStore, type ProfileRow } from '../dcache';
import type { BrowserState } from '../render/render-types';
import { seal, unseal } from './profile-seal';

/** Profiles one caller may keep. */
export const MAX_PROFILES = 100;
/** The most of a browser's storage state a profile keeps (its JSON). */
export const MAX_STATE_BYTES = 1024 * 1024;
export const PROFILE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export type { BrowserState };

/** What a caller is shown of a profile: never its cookies or storage. */
export interface ProfileView {
  name: string;
  /** Whether a render has saved a state into it. */
  saved: boolean;
  /** Bytes of its state. */
  bytes: number;
  created_at: string;
  updated_at: string;
}

/** A profile as a fetch uses it: its state, and what tells its versions apart in a cache key. */
export interface LoadedProfile {
  name: string;
  state?: BrowserState;
  version: string;
}

type Who = { name: string; callerClass: string };

const viewOf = (r: Omit<ProfileRow, 'state'>): ProfileView => ({
  name: r.name,
  saved: r.bytes > 0,
  bytes: r.bytes,
  created_at: new Date(Number(r.created_at)).toISOString(),
  updated_at: new Date(Number(r.updated_at)).toISOString(),
});

/**
 * Browser profiles (SPEC "Sessions, actions and proxies"): a caller's named storage states,
 * sealed at rest with SIFT_SECRET_KEY, on whichever database sift runs on. Every read and write
 * names the caller as owner: another caller's profile is 404, as if it did not exist.
 */
@Injectable()
export class ProfileService {
  constructor(
    private readonly config: AppConfig,
    private readonly store: ProfileStore,
    private readonly clock: Clock,
  ) {}

  async create(caller: Who, name: string): Promise<ProfileView> {
    this.key();
    const owner = callerKeyOf(caller);
    if ((await this.store.count(owner)) >= MAX_PROFILES)
      throw invalidRequest(
        `a caller may keep at most ${MAX_PROFILES} profiles`,
        'delete one you no longer use (DELETE /v1/profiles/{name})',
      );
    if (!(await this.store.create(owner, name, this.clock.nowMs())))
      throw new SiftError(
        409,
        'profile_exists',
        `a profile named "${name}" exists`,
        'use it, or delete it first',
      );
    return viewOf((await this.store.get(owner, name))!);
  }

  async list(caller: Who): Promise<ProfileView[]> {
    return (await this.store.list(callerKeyOf(caller))).map(viewOf);
  }

  async view(caller: Who, name: string): Promise<ProfileView> {
    const row = await this.store.get(callerKeyOf(caller), name);
    if (!row) throw notFound('profile');
    return viewOf(row);
  }

  /**
   * The profiles a job's options name, checked when it is submitted: each the caller's own (404
   * naming it otherwise), unless the job saves into it (made then). Refused without a key.
   */
  async checkNamed(caller: Who, options: unknown[]): Promise<void> {
    const named = new Set<string>();
    for (const o of options) {
      const p = (o as { profile?: { name?: unknown; save?: unknown } } | null | undefined)?.profile;
      if (p === undefined) continue;
      this.key();
      if (typeof p?.name === 'string' && p.save !== true) named.add(p.name);
    }
    const owner = callerKeyOf(caller);
    for (const name of named) {
      if (!(await this.store.get(owner, name)))
        throw new SiftError(
          404,
          'not_found',
          `no such profile "${name}"`,
          'create it (POST /v1/profiles), or save into it first',
        );
    }
  }

  async remove(caller: Who, name: string): Promise<void> {
    if (!(await this.store.delete(callerKeyOf(caller), name))) throw notFound('profile');
  }

  /**
   * The caller's profile for a fetch: 404 when the caller has none of that name, unless the fetch
   * saves into it (`create`): then it is made, empty, as POST /v1/profiles would.
   */
  async load(caller: Who, name: string, create = false): Promise<LoadedProfile> {
    const key = this.key();
    const owner = callerKeyOf(caller);
    let row = await this.store.get(owner, name);
    if (!row && create) {
      await this.create(caller, name).catch((err: unknown) => {
        if (!(err instanceof SiftError && err.code === 'profile_exists')) throw err;
      });
      row = await this.store.get(owner, name);
    }
    if (!row) throw notFound('profile');
    const version = `${owner}/${name}@${row.updated_at}`;
    if (!row.state) return { name, version };
    const plain = unseal(key, owner, name, row.state);
    if (plain === undefined)
      throw new SiftError(
        409,
        'profile_unreadable',
        `the profile "${name}" was sealed with another SIFT_SECRET_KEY and cannot be read`,
        'delete it and save it again, or ask the operator for the key it was sealed with',
      );
    return { name, state: JSON.parse(plain) as BrowserState, version };
  }

  /** Keeps a render's storage state in the caller's profile (sealed). */
  async save(caller: Who, name: string, state: BrowserState): Promise<void> {
    const key = this.key();
    const owner = callerKeyOf(caller);
    const plain = JSON.stringify(state);
    const bytes = Buffer.byteLength(plain);
    if (bytes > MAX_STATE_BYTES)
      throw new SiftError(
        502,
        'too_large',
        `the browser's storage state is ${bytes} bytes, over ${MAX_STATE_BYTES}: the profile "${name}" was not saved`,
        'save the profile from a page that keeps less in its cookies and localStorage',
      );
    const saved = await this.store.putState(
      owner,
      name,
      seal(key, owner, name, plain),
      bytes,
      this.clock.nowMs(),
    );
    if (!saved) throw notFound('profile');
  }

  /** The sealing key; profiles are refused, with the way to turn them on, without one. */
  private key(): Buffer {
    const key = this.config.secretKey;
    if (!key)
      throw invalidRequest(
        'browser profiles are off on this server: it has no key to seal them with',
        'the operator sets SIFT_SECRET_KEY to 32 random bytes (openssl rand -hex 32) to keep profiles',
      );
    return key;
  }
}
