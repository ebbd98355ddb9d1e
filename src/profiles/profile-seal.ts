import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** The seal's format, first in every sealed value: a later one can be told apart. */
const VERSION = 'v1';

/**
 * A profile's state sealed with AES-256-GCM under the server's key: a fresh 96-bit nonce each
 * time, and the owner and name bound in as additional data, so a sealed state copied to another
 * caller's row (or another name) does not open.
 */
export function seal(key: Buffer, owner: string, name: string, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(`${owner}\n${name}`));
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `${VERSION}.${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
}

/** The state, or undefined when it does not open (another key, another owner, tampered with). */
export function unseal(key: Buffer, owner: string, name: string, sealed: string): string | undefined {
  if (!sealed.startsWith(`${VERSION}.`)) return undefined;
  const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64');
  if (raw.length < 28) return undefined;
  try {
    const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    d.setAAD(Buffer.from(`${owner}\n${name}`));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
