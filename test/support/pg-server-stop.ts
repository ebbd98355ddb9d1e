import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ThrowawayServer } from './pg-server';

/** Jest's global teardown: stops the server pg-server.ts started, if it started one. */
export default function teardown(): void {
  const s = (globalThis as { siftPgServer?: ThrowawayServer }).siftPgServer;
  if (!s) return;
  s.run(['pg_ctl', '-D', s.data, '-m', 'immediate', 'stop']);
  fs.rmSync(path.dirname(s.data), { recursive: true, force: true });
}
