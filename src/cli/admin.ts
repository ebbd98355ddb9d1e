// The server's own commands: they open the database directly (no HTTP). The CLI loads this file
// only for them, so the client's commands start without the server's modules.
import '../tuning/lazy-intl';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { callerClassClash, fingerprint } from '../api/authenticator';
import { ConfigError, databaseName, loadConfig } from '../config/app-config';
import { openDcacheFor } from '../dcache';
import { parse } from './args';
import { usage } from './client';

function config() {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) usage(err.message);
    throw err;
  }
}

export async function migrate(): Promise<void> {
  const cfg = config();
  const d = await openDcacheFor(cfg, (m) => console.error(`sift: ${m}`));
  await d.close();
  console.log(`database ${databaseName(cfg)} is up to date`);
}

export async function tokenCreate(args: string[]): Promise<void> {
  const { positionals, values } = parse('token create', args, { class: { type: 'string' } });
  const caller = positionals[0];
  if (!caller || !/^[\w.@-]{1,64}$/.test(caller))
    usage('token create needs a CALLER name (letters, digits, . _ @ -)');
  const cls = values.class;
  if (cls !== 'fleet' && cls !== 'restricted')
    usage('token create needs --class fleet or --class restricted');
  const cfg = config();
  const token = `sift_${randomBytes(24).toString('base64url')}`;
  const d = await openDcacheFor(cfg, (m) => console.error(`sift: ${m}`));
  try {
    const clash = callerClassClash(cfg.tokens, [
      ...(await d.clients.clients()),
      { caller, callerClass: cls },
    ]);
    if (clash) usage(`token create refused: ${clash}; pick another CALLER name`);
    await d.clients.addClient({
      fingerprint: fingerprint(token),
      caller,
      callerClass: cls,
      createdAt: Math.floor(Date.now() / 1000),
    });
  } finally {
    await d.close();
  }
  console.error(`created a ${cls} token for ${caller}; it is shown once:`);
  console.log(token);
}
